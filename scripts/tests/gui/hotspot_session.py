"""Runs one GUI command inside an X server started by xvfb-run and reports what happened:

  xvfb-run -a -s "-screen 0 1600x1000x24" python3 hotspot_session.py OUT TITLE TIMEOUT -- COMMAND...

Starts COMMAND, waits until OUT/perfparser.rc exists (the perfparser wrapper writes it when
Hotspot's parser has exited) and a top-level window titled TITLE exists (xwininfo), lets the GUI
draw for two seconds, saves a screenshot of the screen to OUT/screen.png (ImageMagick's
import), writes the window list to OUT/windows.txt, then stops COMMAND. Exits 0 when both
happened in TIMEOUT seconds, 1 otherwise (OUT/windows.txt says which windows there were).
"""
import subprocess
import sys
import time
from pathlib import Path


def windows() -> str:
    return subprocess.run(["xwininfo", "-root", "-tree"], capture_output=True, text=True).stdout


def main(argv):
    out, title, timeout = Path(argv[1]), argv[2], float(argv[3])
    command = argv[argv.index("--") + 1:]
    gui = subprocess.Popen(command, stdout=open(out / "gui.out", "wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    ok = False
    listing = ""
    while time.monotonic() < deadline and gui.poll() is None:
        listing = windows()
        if (out / "perfparser.rc").exists() and f'"{title}"' in listing:
            ok = True
            break
        time.sleep(0.5)
    if ok:
        time.sleep(2)  # the views fill in after the parser's data has arrived
        listing = windows()
        subprocess.run(["import", "-window", "root", str(out / "screen.png")], check=False)
    (out / "windows.txt").write_text(listing)
    if gui.poll() is None:
        gui.terminate()
        try:
            gui.wait(10)
        except subprocess.TimeoutExpired:
            gui.kill()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
