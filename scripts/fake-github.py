#!/usr/bin/env python3
"""A stand-in for GitHub's OAuth app flow for the browser journeys, on 127.0.0.1:

  GET  /login/oauth/authorize   a page with an "Authorize" button that returns the browser to
                                redirect_uri with a one-time code and the state it was given
  POST /login/oauth/access_token  code -> access token (refuses unknown or used codes, checks
                                the client secret)
  GET  /user, /user/emails      the user behind the token

Each authorization is a new GitHub user, octo-e2e-1, octo-e2e-2, ... Prints "listening on PORT".

    python3 scripts/fake-github.py CLIENT_SECRET [PORT]
"""
import html
import json
import secrets
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = sys.argv[1]
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0
codes = {}   # code -> login
issued = 0   # authorizations so far
tokens = {}  # token -> login


def user_of(login):
    uid = 40000 + sum(login.encode())
    return {"id": uid, "login": login, "name": login.replace("-", " ").title(),
            "avatar_url": f"https://avatars.example/{uid}"}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def token_user(self):
        auth = self.headers.get("Authorization", "")
        return tokens.get(auth.removeprefix("Bearer ").strip())

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        if url.path == "/login/oauth/authorize":
            if q.get("scope") != "user:email" or not q.get("state") or not q.get("redirect_uri"):
                return self.reply(400, "bad authorize request", "text/plain")
            global issued
            issued += 1
            code = secrets.token_hex(8)
            codes[code] = f"octo-e2e-{issued}"
            back = q["redirect_uri"] + "?" + urllib.parse.urlencode({"code": code, "state": q["state"]})
            page = (f"<!doctype html><title>Authorize</title><h1>Authorize {html.escape(q.get('client_id', ''))}</h1>"
                    f"<a id=\"authorize\" href=\"{html.escape(back)}\">Authorize</a>")
            return self.reply(200, page, "text/html; charset=utf-8")
        login = self.token_user()
        if login is None:
            return self.reply(401, {"message": "Bad credentials"})
        if url.path == "/user":
            return self.reply(200, user_of(login))
        if url.path == "/user/emails":
            return self.reply(200, [{"email": f"{login}@users.e2e.test", "primary": True, "verified": True}])
        self.reply(404, {"message": "Not Found"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        form = dict(urllib.parse.parse_qsl(self.rfile.read(n).decode()))
        if urllib.parse.urlsplit(self.path).path != "/login/oauth/access_token":
            return self.reply(404, {"message": "Not Found"})
        login = codes.pop(form.get("code", ""), None)
        if login is None or form.get("client_secret") != SECRET:
            return self.reply(200, {"error": "bad_verification_code",
                                    "error_description": "The code passed is incorrect or expired."})
        token = "gho_" + secrets.token_hex(12)
        tokens[token] = login
        self.reply(200, {"access_token": token, "token_type": "bearer", "scope": "user:email"})


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
