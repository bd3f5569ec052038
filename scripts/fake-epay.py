#!/usr/bin/env python3
"""A stand-in for an epay (易支付) gateway for the browser journeys, on 127.0.0.1:

  GET /submit.php?...   checks the merchant id and the MD5 signature as epay does (400 with the
                        reason when either is wrong) and shows a cashier page with the amount
                        and a "Pay" link
  GET /pay?t=TOKEN      "pays": calls the order's notify_url with a signed TRADE_SUCCESS
                        notification (GET, as epay does), records the answer, and sends the
                        browser back to return_url
  GET /notifications    what each notification was answered (JSON), for the journey to check

Prints "listening on PORT".

    python3 scripts/fake-epay.py PID KEY [PORT]
"""
import hashlib
import html
import json
import secrets
import sys
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PID, KEY = sys.argv[1], sys.argv[2]
PORT = int(sys.argv[3]) if len(sys.argv) > 3 else 0
pending = {}  # token -> submit parameters
answers = []  # what notify_url answered, in order
paid = 0


def sign(params):
    text = "&".join(f"{k}={params[k]}" for k in sorted(params)
                    if k not in ("sign", "sign_type") and params[k] != "")
    return hashlib.md5((text + KEY).encode()).hexdigest()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="text/html; charset=utf-8", headers=()):
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        global paid
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        if url.path == "/submit.php":
            if q.get("pid") != PID:
                return self.reply(400, "unknown merchant", "text/plain")
            if q.get("sign_type") != "MD5" or q.get("sign") != sign(q):
                return self.reply(400, "bad signature", "text/plain")
            for k in ("out_trade_no", "notify_url", "return_url", "money", "name"):
                if not q.get(k):
                    return self.reply(400, f"missing {k}", "text/plain")
            token = secrets.token_hex(8)
            pending[token] = q
            page = (f"<!doctype html><title>Cashier</title><h1 id=\"amount\">¥{html.escape(q['money'])}</h1>"
                    f"<p id=\"order\">{html.escape(q['out_trade_no'])}</p>"
                    f"<a id=\"pay\" href=\"/pay?t={token}\">Pay</a>")
            return self.reply(200, page)
        if url.path == "/pay":
            q = pending.pop(q.get("t", ""), None)
            if q is None:
                return self.reply(400, "unknown or used payment", "text/plain")
            paid += 1
            note = {"pid": PID, "trade_no": f"EPAY{paid:06d}", "out_trade_no": q["out_trade_no"],
                    "type": q.get("type") or "alipay", "name": q["name"], "money": q["money"],
                    "trade_status": "TRADE_SUCCESS"}
            note["sign"] = sign(note)
            note["sign_type"] = "MD5"
            target = q["notify_url"] + "?" + urllib.parse.urlencode(note)
            try:
                with urllib.request.urlopen(target, timeout=10) as r:
                    answers.append({"order": q["out_trade_no"], "status": r.status, "body": r.read().decode()})
            except urllib.error.HTTPError as e:
                answers.append({"order": q["out_trade_no"], "status": e.code, "body": e.read().decode()})
            return self.reply(302, "", headers=[("Location", q["return_url"])])
        if url.path == "/notifications":
            return self.reply(200, answers, "application/json")
        self.reply(404, "not found", "text/plain")


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
print(f"listening on {server.server_address[1]}", flush=True)
server.serve_forever()
