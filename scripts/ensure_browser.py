"""Make sure the browser tests have a Chromium: Debian's when present or installable, else Playwright's.

Order: a `chromium` already on PATH; as root with apt-get, Debian's `chromium` package; otherwise
`playwright install chromium` (a download of Playwright's own build). Prints the executable the
tests will use; `MEMORYPR_CHROMIUM` points them at any other.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys


def main() -> int:
    found = (
        os.environ.get("MEMORYPR_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )
    if found:
        print(f"browser tests: {found}")
        return 0
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env, stdout=subprocess.DEVNULL
        )
        print(f"browser tests: {shutil.which('chromium')} (installed Debian's chromium)")
        return 0
    subprocess.run([sys.executable, "-m", "playwright", "install", "chromium"], check=True)
    print("browser tests: Playwright's chromium (installed with `playwright install chromium`)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
