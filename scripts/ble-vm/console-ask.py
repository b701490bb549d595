#!/usr/bin/env python3
"""Sends one line to the agent's serial console (a pty under --simulate) and prints what comes
back within the time given. Usage: console-ask.py PTY LINE [SECONDS]"""
import os
import select
import sys
import time
import tty

fd = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)
tty.setraw(fd)
os.write(fd, (sys.argv[2] + "\r\n").encode())
deadline = time.monotonic() + float(sys.argv[3] if len(sys.argv) > 3 else 2)
answer = b""
while time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        answer += os.read(fd, 4096)
sys.stdout.write(answer.decode(errors="replace"))
