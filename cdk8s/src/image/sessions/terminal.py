# The web terminal a Berth session runs (cdk8s/src/image/sessions.ts): bash in a pseudo-terminal per
# browser tab, over a WebSocket, with Debian's terminado (Jupyter's terminal backend) and xterm.js (npm).
# Serves under BERTH_BASE_PATH (/proxy/{cr}/, forwarded unchanged by the gateway) on BERTH_PORT:
#   GET  {base}            the page        WS {base}websocket   terminado's protocol:
#   GET  {base}xterm/...   xterm.js        ["stdin", text], ["set_size", rows, cols] in; ["stdout", text] out
# No login: the gateway authenticates, and checks Origin on WebSockets.
import asyncio
import os

import tornado.web
from terminado import TermSocket, UniqueTermManager

BASE = os.environ.get("BERTH_BASE_PATH") or (os.environ.get("NB_PREFIX", "") + "/")
if not BASE.endswith("/"):
    BASE += "/"
PORT = int(os.environ.get("BERTH_PORT", "7681"))
HERE = os.path.dirname(os.path.abspath(__file__))


class Page(tornado.web.RequestHandler):
    def get(self):
        with open(os.path.join(HERE, "terminal.html"), "rb") as f:
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.set_header("Cache-Control", "no-store")
            self.write(f.read())


class Socket(TermSocket):
    def check_origin(self, origin):
        return True


class Health(tornado.web.RequestHandler):
    def get(self):
        self.write("ok")


async def main():
    shell = os.environ.get("SHELL", "/bin/bash")
    terms = UniqueTermManager(shell_command=[shell, "-l"], extra_env={"TERM": "xterm-256color"})
    app = tornado.web.Application(
        [
            (BASE.rstrip("/") or "/", tornado.web.RedirectHandler, {"url": BASE}),
            (BASE, Page),
            # The connect link's path (/proxy/{cr}/terminal): the page's relative URLs resolve as from BASE.
            (BASE + "terminal", Page),
            (BASE + "healthz", Health),
            (BASE + "websocket", Socket, {"term_manager": terms}),
            (BASE + "xterm/(.*)", tornado.web.StaticFileHandler, {"path": os.path.join(HERE, "xterm")}),
        ]
    )
    app.listen(PORT, "0.0.0.0")
    print(f"terminal: bash on port {PORT} under {BASE}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
