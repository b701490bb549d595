#!/usr/bin/env python3
"""Writes seed candidates for every fuzz target into OUTDIR/<target>/.

Sources: the known-answer hex blocks of docs/protocol.md, the board and agent example files,
and a few hand-built PDUs, fragments and envelopes. scripts/fuzz/make-seeds.sh then keeps, per
binary target, only the candidates the target's decoder accepts (carkey-fuzz seed)."""
import os, re, sys, json, glob

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
out = sys.argv[1]

def blocks():
    text = open(os.path.join(root, "docs/protocol.md")).read() + open(os.path.join(root, "docs/cloud.md")).read()
    found = []
    for body in re.findall(r"```\n([0-9a-f\n]+)```", text):
        h = body.replace("\n", "")
        if len(h) % 2 == 0 and h:
            found.append(bytes.fromhex(h))
    return found

def put(target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def chunks(parts):
    return b"".join(bytes([len(p)]) + p for p in parts)

kat = blocks()
# Frames the documents show as tables only: AuthResponse (raw and DER signature) and Faults.
kat.append(bytes([0xAA, 0xBB, 0x01]) + bytes(range(32)) + bytes([0x69, 0x55, 0xB9, 0x01]) + bytes(range(64)))
kat.append(bytes([0xAA, 0xBB, 0x01]) + bytes(range(32)) + bytes([0x69, 0x55, 0xB9, 0x01])
           + bytes([0x30, 0x44, 0x02, 0x20]) + bytes(range(1, 33)) + bytes([0x02, 0x20]) + bytes(range(2, 34)))
for code in (0x0001, 0x0101, 0x0201):
    kat.append(bytes([0x7F, 0x01, code >> 8, code & 0xFF]))
binary = ["message", "hello", "challenge", "auth-response", "fault", "encrypted-record",
          "pairing-hello", "pairing-challenge", "pairing-proof", "pairing-result", "advertising-key-grant",
          "session-record", "share-certificate", "revocation", "stored-key-record", "stored-key-activity",
          "stored-revocation", "remote-command", "signed-config", "revocation-list", "fleet-key-grant",
          "ranging-setup", "ranging-capabilities", "sealed-record", "att-request", "dw3000-header"]
for t in binary:
    for i, b in enumerate(kat):
        put(t, "kat-%03d" % i, b)
for i, b in enumerate(kat):
    for sel in range(3):
        put("session-plaintext", "kat-%03d-%d" % (i, sel), bytes([sel]) + b)
# Command plaintexts: every command code with no arguments and a short argument.
for code in range(0, 16):
    put("session-plaintext", "cmd-%02x" % code, bytes([0, code, 0x65, 0x00, 0x00, 0x00, 0]))
    put("session-plaintext", "cmd-%02x-arg" % code, bytes([0, code, 0x65, 0x00, 0x00, 0x00, 2, 1, 2]))

# ATT: a client's usual conversation with the car's database.
att = [bytes([0x02, 0xF7, 0x00]),                      # exchange MTU 247
       bytes([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]),  # read by group type: primary services
       bytes([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28]),  # read by type: characteristics
       bytes([0x04, 0x01, 0x00, 0xFF, 0xFF]),          # find information
       bytes([0x0A, 0x03, 0x00]),                      # read device name
       bytes([0x0C, 0x03, 0x00, 0x02, 0x00]),          # read blob
       bytes([0x12, 0x0F, 0x00, 0x01, 0x00]),          # enable notifications
       bytes([0x12, 0x0C, 0x00, 0xC0, 0x00]) + kat[0][:16],  # write a fragment
       bytes([0x52, 0x0C, 0x00, 0xC0, 0x00]) + kat[0][:16]]  # write command
for i, p in enumerate(att):
    put("att-request", "pdu-%02d" % i, p)
put("att-server", "conversation", chunks(att))
put("att-server", "mtu-only", chunks(att[:1]))
put("att-server", "discovery", chunks(att[:4]))

# Link framing and fragments built from the known-answer messages.
for i, b in enumerate(kat[:8]):
    if len(b) <= 1024:
        framed = bytes([len(b) >> 8, len(b) & 0xFF]) + b
        put("link-framing", "kat-%03d" % i, chunks([framed[:5], framed[5:60], framed[60:]]))
        # One START|END fragment, and a START + END pair.
        put("fragment-reassembler", "single-%03d" % i, chunks([bytes([0xC0, len(b) >> 8, len(b) & 0xFF]) + b[:200]]))
        half = min(len(b) // 2, 100)
        put("fragment-reassembler", "pair-%03d" % i,
            chunks([bytes([0x80, len(b) >> 8, len(b) & 0xFF]) + b[:half], bytes([0x41]) + b[half:half + 200]]))

for name, h in [("read-devid", b"\x00"), ("full-read", b"\x40\x04"), ("write-and", b"\xC0\x05"),
                ("fast-txrx", b"\x83"), ("fast-rx", b"\x85"), ("write-sys", b"\x82\x00\x00")]:
    put("dw3000-header", name, h)

# MQTT envelopes: byte 0 picks the topic (commands, config, cmd, revocations, config/desired).
uuid = "0f8fad5b-d9cb-469f-a165-70867728950e"
for sel, typ in [(0, "command"), (0, "revocation"), (1, "config"), (2, "command"), (2, "fleetKey"),
                 (3, "revocationList"), (4, "config")]:
    for i, b in enumerate(kat[:4]):
        env = json.dumps({"id": uuid, "type": typ, "body": b.hex()}).encode()
        put("mqtt-inbound", "%d-%s-%d" % (sel, typ, i), bytes([sel]) + env)
    put("mqtt-inbound", "%d-%s-empty" % (sel, typ), bytes([sel]) + json.dumps({"id": uuid, "type": typ, "body": ""}).encode())

# Text inputs.
jsons = sorted(glob.glob(os.path.join(root, "board/*.json")))
for p in jsons:
    data = open(p, "rb").read()
    put("json", os.path.basename(p), data)
    if "agent" not in os.path.basename(p):
        put("board-file", os.path.basename(p), data)
for name, text in [("scalars", b'[1, -2.5e3, "a\\u00e9", true, false, null]'), ("nested", b'{"a": {"b": [[], {}]}}')]:
    put("json", name, text)
put("agent-config", "agent.example.json", open(os.path.join(root, "board/agent.example.json"), "rb").read())
put("agent-config", "minimal", b'{"logLevel": "info"}\n')
for i, b in enumerate(kat[:12]):
    put("carkey-decode", "kat-%03d" % i, b.hex().encode())
put("carkey-decode", "colons", b"0x01:01:80")
for name, text in [("help", b"help\r\n"), ("echo", b"echo one two\n"), ("unknown", b"reboot now\n"),
                   ("erase", b"ech\x7fo x\n"), ("long", b"echo " + b"a" * 300 + b"\n")]:
    put("agent-console", name, text)

# A box sealed under the fuzz target's fixed store key and associated data (KeyTargets.swift).
try:
    import hashlib
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    key = hashlib.sha256(b"carkey-fuzz/fixed-store-key").digest()
    aad = b"opencarkey/sealed-record/v1" + bytes([0, 3]) + b"key" + bytes([8, 1, 2, 3, 4, 5, 6, 7, 8])
    for i, payload in enumerate([b"K\x01" + bytes(92), b"A\x01" + bytes(21)]):
        nonce = bytes([i]) * 12
        put("sealed-record", "sealed-%d" % i, nonce + AESGCM(key).encrypt(nonce, payload, aad))
except ImportError:
    pass
