#!/usr/bin/env python3
"""A phone that connects to the car's ATT channel, exchanges MTUs and then holds the link, so
the lane can cut it underneath (hcitool ledc) and watch the car notice, or watch the car end
it (its handshake deadline; with --break-framing a fragment that breaks the format at once).
Python 3.11's socket module cannot address LE fixed channels, so bind/connect go through libc
with a sockaddr_l2.

Prints `mtu N` once the car answered, `broken-fragment` when it sent one, then
`ended: ERRNO-NAME after-ms N end-epoch T` when the link goes (N from the broken fragment, or
from the MTU answer; T the wall clock, to compare with the agent's log).
"""
import argparse, ctypes, errno, os, select, socket, struct, subprocess, sys, time

AF_BLUETOOTH, BTPROTO_L2CAP, ATT_CID = 31, 0, 4
BDADDR_LE_PUBLIC, BDADDR_LE_RANDOM = 1, 2


def sockaddr_l2(address, address_type):
    octets = bytes(int(part, 16) for part in reversed(address.split(":")))
    # family u16, psm le16, bdaddr[6], cid le16, bdaddr_type u8, pad
    return struct.pack("<HH6sHBx", AF_BLUETOOTH, 0, octets, ATT_CID, address_type)


def adapter_address(index):
    # hciconfig (ioctls), not btmgmt: btmgmt's shell quits early when stdin is /dev/null.
    info = subprocess.run(["hciconfig", f"hci{index}"], capture_output=True, text=True)
    for line in info.stdout.splitlines():
        if "BD Address: " in line:
            return line.split("BD Address: ")[1].split()[0]
    sys.exit(f"no address for hci{index}: {info.stdout!r} {info.stderr!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--adapter", type=int, required=True)
    parser.add_argument("--car", required=True)
    parser.add_argument("--type", choices=["public", "random"], default="random")
    parser.add_argument("--hold", type=float, default=30)
    parser.add_argument("--break-framing", action="store_true",
                        help="after the MTU exchange, write a continuation fragment without a START")
    args = parser.parse_args()

    libc = ctypes.CDLL(None, use_errno=True)
    sock = socket.socket(AF_BLUETOOTH, socket.SOCK_SEQPACKET, BTPROTO_L2CAP)
    local = sockaddr_l2(adapter_address(args.adapter), BDADDR_LE_PUBLIC)
    if libc.bind(sock.fileno(), local, len(local)) != 0:
        sys.exit(f"bind: {os.strerror(ctypes.get_errno())}")
    remote = sockaddr_l2(args.car, BDADDR_LE_RANDOM if args.type == "random" else BDADDR_LE_PUBLIC)
    if libc.connect(sock.fileno(), remote, len(remote)) != 0:
        sys.exit(f"connect: {os.strerror(ctypes.get_errno())}")
    sock.send(bytes([0x02, 0x00, 0x02]))          # Exchange MTU Request, client MTU 512
    response = sock.recv(64)
    if len(response) != 3 or response[0] != 0x03:
        sys.exit(f"unexpected answer to the MTU request: {response.hex()}")
    print(f"mtu {struct.unpack('<H', response[1:3])[0]}", flush=True)
    since = time.monotonic()
    if args.break_framing:
        # Write Command to the phone-to-car value (0x000C): a continuation, sequence 1, no START.
        sock.send(bytes([0x52, 0x0C, 0x00, 0x01, 0xAA]))
        since = time.monotonic()
        print("broken-fragment", flush=True)

    def ended(what):
        after = (time.monotonic() - since) * 1000
        print(f"ended: {what} after-ms {after:.0f} end-epoch {time.time():.3f}", flush=True)

    deadline = time.monotonic() + args.hold
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], 0.02)
        if not ready:
            continue
        try:
            if not sock.recv(512):
                ended("EOF")
                return
        except OSError as error:
            ended(errno.errorcode.get(error.errno, error.errno))
            return
    print("ended: held", flush=True)


main()
