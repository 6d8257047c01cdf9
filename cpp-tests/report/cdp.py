"""Headless Chromium driven through the DevTools protocol over a pipe.

`--remote-debugging-pipe` makes Chromium read protocol commands from fd 3 and write replies and
events to fd 4, each message a JSON text ended by a NUL byte. That needs no port, no websocket
and no package beyond the standard library, and nothing else on the machine can connect to it.
"""
import fcntl
import json
import os
import select
import shutil
import subprocess
import time

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--remote-debugging-pipe",
]


class ProtocolError(Exception):
    pass


def chromium_path():
    """The Chromium binary; fails naming the Debian package when it is missing."""
    path = shutil.which("chromium")
    if not path:
        raise RuntimeError("chromium not found: install Debian's chromium package (scripts/setup does)")
    return path


class Browser:
    """One Chromium process with one page (a flattened session on a new target)."""

    def __init__(self, user_data_dir, net_log=None, width=1280, height=800):
        os.makedirs(user_data_dir, exist_ok=True)
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire_pipes():  # in the child: the pipe ends become fds 3 and 4, whatever they were
            ends = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser_r, from_browser_w)]
            os.dup2(ends[0], 3)
            os.dup2(ends[1], 4)

        args = [chromium_path(), *CHROMIUM_FLAGS, f"--user-data-dir={user_data_dir}"]
        if net_log:
            args.append(f"--log-net-log={net_log}")
        args.append("about:blank")
        self.stderr_path = os.path.join(user_data_dir, "chromium-stderr.txt")
        with open(self.stderr_path, "wb") as stderr:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr,
                                         preexec_fn=wire_pipes, pass_fds=(3, 4))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.page("Page.enable")
        self.page("Runtime.enable")
        self.page("Network.enable")
        self.page("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except (ProtocolError, OSError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass

    # ---- protocol ----

    def _send(self, method, params, session):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._to_browser, data):]
        return self._next_id

    def _read(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message from Chromium in time; its stderr: " + self.stderr_tail())
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise ProtocolError("Chromium closed the pipe; its stderr: " + self.stderr_tail())
                self._buffer += chunk
        text, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(text)

    def call(self, method, params=None, session=None, timeout=60):
        wanted = self._send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            message = self._read(deadline)
            if message.get("id") == wanted:
                if "error" in message:
                    raise ProtocolError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def page(self, method, params=None, timeout=60):
        return self.call(method, params, session=self.session, timeout=timeout)

    def wait_event(self, method, timeout=60):
        """The first event `method` not yet consumed, waiting for it if needed."""
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self.events):
                if event["method"] == method:
                    return self.events.pop(i)
            message = self._read(deadline)
            if "method" in message:
                self.events.append(message)

    def stderr_tail(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read()[-2000:].decode(errors="replace")
        except OSError:
            return "(none)"

    # ---- page helpers ----

    def evaluate(self, expression, timeout=60):
        result = self.page("Runtime.evaluate",
                           {"expression": expression, "returnByValue": True, "awaitPromise": True},
                           timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise ProtocolError(f"{expression[:80]}: {details.get('exception', {}).get('description', details)}")
        return result["result"].get("value")

    def navigate(self, url, timeout=120):
        """Loads `url` and waits for its load event; returns the wall time in ms."""
        started = time.monotonic()
        reply = self.page("Page.navigate", {"url": url}, timeout=timeout)
        if reply.get("errorText"):
            raise ProtocolError(f"navigating to {url}: {reply['errorText']}")
        self.wait_event("Page.loadEventFired", timeout=timeout)
        return (time.monotonic() - started) * 1000

    def mouse(self, kind, x, y, **extra):
        self.page("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, **extra})

    def click(self, x, y):
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, button="left", clickCount=1)
        self.mouse("mouseReleased", x, y, button="left", clickCount=1)

    def exceptions(self):
        """Uncaught exceptions of the page's scripts so far, as Chromium describes them."""
        return [e["params"]["exceptionDetails"].get("exception", {}).get("description", e["params"]["exceptionDetails"])
                for e in self.events if e["method"] == "Runtime.exceptionThrown"]

    def requests(self):
        """URLs of every request the page started or had blocked, from the Network events seen."""
        urls = []
        for event in self.events:
            if event["method"] == "Network.requestWillBeSent":
                urls.append(event["params"]["request"]["url"])
        return urls
