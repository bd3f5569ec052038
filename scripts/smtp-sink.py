#!/usr/bin/env python3
"""A mail server for the browser journeys: accepts SMTP on 127.0.0.1 (no TLS, any AUTH) and
writes every message it receives to DIR/<n>.eml. Prints "listening on PORT" once ready.

    python3 scripts/smtp-sink.py DIR [PORT]
"""
import asyncio
import pathlib
import sys

OUT = pathlib.Path(sys.argv[1])
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0
count = 0


async def session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    global count

    def say(line: str) -> None:
        writer.write((line + "\r\n").encode())

    say("220 e2e ESMTP")
    in_data, data = False, []
    while True:
        raw = await reader.readline()
        if not raw:
            break
        line = raw.decode(errors="replace").rstrip("\r\n")
        if in_data:
            if line == ".":
                in_data = False
                count += 1
                (OUT / f"{count:04}.eml").write_text("\n".join(data) + "\n")
                data = []
                say("250 queued")
            else:
                data.append(line[1:] if line.startswith("..") else line)
            await writer.drain()
            continue
        cmd = line.upper()
        if cmd.startswith(("EHLO", "HELO")):
            say("250-e2e")
            say("250 AUTH PLAIN LOGIN")
        elif cmd.startswith("AUTH"):
            say("235 authenticated")
        elif cmd.startswith("DATA"):
            in_data = True
            say("354 go ahead")
        elif cmd.startswith("QUIT"):
            say("221 bye")
            await writer.drain()
            break
        else:
            say("250 ok")
        await writer.drain()
    writer.close()


async def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    server = await asyncio.start_server(session, "127.0.0.1", PORT)
    print(f"listening on {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


asyncio.run(main())
