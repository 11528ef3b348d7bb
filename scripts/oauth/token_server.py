#!/usr/bin/env python3
"""An OIDC token endpoint and its JWKS for `scripts/kafka start --oauth`, on 127.0.0.1 only.

The client-credentials grant of RFC 6749 §4.4, as managed Kafka offerings run it: a client posts
`grant_type=client_credentials` with its id and secret (HTTP Basic, or `client_id` and
`client_secret` in the form) and gets an RS256 JWT whose `sub` is its id, `aud` is `kafka`, and
`iss` is this server. The brokers check tokens against `GET /jwks`
(OAuthBearerValidatorCallbackHandler). Standard library only: the RSA key is made here (2048
bits, what jose4j requires) and kept in STATE_DIR/key.json, so a restarted server signs with the
key the brokers already fetched.

Clients: every NAME given on the command line, with the secret `NAME-secret` (test material).
The client `forged` gets tokens signed with a second key that the JWKS does not publish, so a
broker must refuse them. Each token issued is logged to STATE_DIR/issued.log as `sub scope`.

Usage: token_server.py STATE_DIR PORT NAME...   (writes STATE_DIR/ready once it serves)
"""

import base64
import hashlib
import json
import os
import secrets
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

AUDIENCE = "kafka"
LIFETIME_S = 3600
KEY_ID = "asc-test"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def int_bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


def probably_prime(n: int, rounds: int = 40) -> bool:
    """Miller-Rabin with random bases, after trial division by the small primes."""
    for p in (3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47):
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for _ in range(rounds):
        x = pow(secrets.randbelow(n - 3) + 2, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def prime(bits: int, e: int) -> int:
    while True:
        # Top two bits set, so that the product of two has exactly 2 * bits bits.
        candidate = secrets.randbits(bits) | (0b11 << (bits - 2)) | 1
        if (candidate - 1) % e and probably_prime(candidate):
            return candidate


def new_key() -> dict:
    e = 65537
    while True:
        p, q = prime(1024, e), prime(1024, e)
        if p != q:
            break
    return {"n": p * q, "e": e, "d": pow(e, -1, (p - 1) * (q - 1))}


def load_keys(state_dir: str) -> dict:
    path = os.path.join(state_dir, "key.json")
    try:
        with open(path) as f:
            stored = json.load(f)
        return {name: {k: int(v) for k, v in key.items()} for name, key in stored.items()}
    except FileNotFoundError:
        keys = {"published": new_key(), "forged": new_key()}
        with open(path + ".tmp", "w") as f:
            json.dump({name: {k: str(v) for k, v in key.items()} for name, key in keys.items()}, f)
        os.replace(path + ".tmp", path)
        return keys


# The DER DigestInfo prefix of SHA-256 (RFC 8017 §9.2, note 1).
SHA256_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")


def rs256(key: dict, message: bytes) -> bytes:
    """RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 §8.2.1)."""
    size = (key["n"].bit_length() + 7) // 8
    digest_info = SHA256_PREFIX + hashlib.sha256(message).digest()
    encoded = b"\x00\x01" + b"\xff" * (size - len(digest_info) - 3) + b"\x00" + digest_info
    return pow(int.from_bytes(encoded, "big"), key["d"], key["n"]).to_bytes(size, "big")


def jwt(key: dict, claims: dict) -> str:
    header = {"alg": "RS256", "typ": "JWT", "kid": KEY_ID}
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    return f"{signing_input}.{b64url(rs256(key, signing_input.encode()))}"


def main() -> None:
    state_dir, port, clients = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    os.makedirs(state_dir, exist_ok=True)
    keys = load_keys(state_dir)
    issuer = f"http://127.0.0.1:{port}"
    known = {name: f"{name}-secret" for name in clients + ["forged"]}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            sys.stderr.write("token-server: " + (fmt % args) + "\n")

        def reply(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path != "/jwks":
                return self.reply(404, {"error": "not_found"})
            key = keys["published"]
            self.reply(200, {"keys": [{
                "kty": "RSA", "use": "sig", "alg": "RS256", "kid": KEY_ID,
                "n": b64url(int_bytes(key["n"])), "e": b64url(int_bytes(key["e"])),
            }]})

        def do_POST(self):
            if self.path != "/token":
                return self.reply(404, {"error": "not_found"})
            length = int(self.headers.get("Content-Length") or 0)
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            client_id, secret = form.get("client_id"), form.get("client_secret")
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Basic "):
                client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
            if form.get("grant_type") != "client_credentials":
                return self.reply(400, {"error": "unsupported_grant_type"})
            if client_id not in known or known[client_id] != secret:
                return self.reply(401, {"error": "invalid_client",
                                        "error_description": "unknown client or wrong secret"})
            now = int(time.time())
            scope = form.get("scope", "")
            claims = {"iss": issuer, "sub": client_id, "aud": AUDIENCE, "iat": now,
                      "exp": now + LIFETIME_S, "scope": scope}
            key = keys["forged" if client_id == "forged" else "published"]
            with open(os.path.join(state_dir, "issued.log"), "a") as log:
                log.write(f"{client_id} {scope}\n")
            self.reply(200, {"access_token": jwt(key, claims), "token_type": "Bearer",
                             "expires_in": LIFETIME_S})

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    with open(os.path.join(state_dir, "ready"), "w") as f:
        f.write(issuer + "\n")
    server.serve_forever()


if __name__ == "__main__":
    main()
