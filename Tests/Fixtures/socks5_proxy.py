#!/usr/bin/env python3
"""A SOCKS5 proxy (RFC 1928) for Ferry's tests: standard library only, on 127.0.0.1, relaying to 127.0.0.1 only.

Each CONNECT request is logged to --log as one JSON line before anything is connected:
  {"atyp": "ipv4" | "domain" | "ipv6", "host": "127.0.0.1", "port": 8080, "user": "u" | null, "granted": true}
so a test sees whether the client named an address or a host name (a domain, ATYP 3, the proxy would resolve).
A destination other than 127.0.0.1 (or a name) is never connected: it is answered "connection not allowed" (2)
and logged with "granted": false. With --user/--password the client must log in (RFC 1929).

Writes its port to --port-file once it listens; with --exit-with-parent it exits when the process that started
it is gone. One thread per connection; the log is written under one lock.
"""
import argparse
import ipaddress
import json
import os
import select
import socket
import struct
import threading
import time


def write_atomically(path, text):
    temp = path + ".tmp"
    with open(temp, "w") as f:
        f.write(text)
    os.rename(temp, path)


def watch_parent(parent):
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(0)


def read_exactly(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("client closed")
        data += chunk
    return data


def relay(a, b):
    sockets = [a, b]
    while True:
        readable, _, _ = select.select(sockets, [], [], 60)
        if not readable:
            return
        for source in readable:
            data = source.recv(65536)
            if not data:
                return
            (b if source is a else a).sendall(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--exit-with-parent", action="store_true")
    args = parser.parse_args()
    lock = threading.Lock()

    def log(entry):
        with lock, open(args.log, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def reply(client, code):
        client.sendall(struct.pack("!BBBB4sH", 5, code, 0, 1, b"\0\0\0\0", 0))

    def serve(client):
        upstream = None
        try:
            version, count = read_exactly(client, 2)
            methods = read_exactly(client, count)
            if version != 5:
                return
            user = None
            if args.user is not None:
                if 2 not in methods:
                    client.sendall(b"\x05\xff")
                    return
                client.sendall(b"\x05\x02")
                read_exactly(client, 1)
                user = read_exactly(client, read_exactly(client, 1)[0]).decode("utf-8", "replace")
                password = read_exactly(client, read_exactly(client, 1)[0]).decode("utf-8", "replace")
                if user != args.user or password != args.password:
                    client.sendall(b"\x01\x01")
                    return
                client.sendall(b"\x01\x00")
            else:
                if 0 not in methods:
                    client.sendall(b"\x05\xff")
                    return
                client.sendall(b"\x05\x00")
            _, command, _, atyp = read_exactly(client, 4)
            if atyp == 1:
                kind, host = "ipv4", str(ipaddress.IPv4Address(read_exactly(client, 4)))
            elif atyp == 4:
                kind, host = "ipv6", str(ipaddress.IPv6Address(read_exactly(client, 16)))
            elif atyp == 3:
                kind, host = "domain", read_exactly(client, read_exactly(client, 1)[0]).decode("utf-8", "replace")
            else:
                reply(client, 8)
                return
            port = struct.unpack("!H", read_exactly(client, 2))[0]
            granted = command == 1 and kind == "ipv4" and host == "127.0.0.1"
            log({"atyp": kind, "host": host, "port": port, "user": user, "granted": granted})
            if not granted:
                reply(client, 2)  # connection not allowed by ruleset
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", port), timeout=10)
            except OSError:
                reply(client, 5)  # connection refused
                return
            upstream.settimeout(None)
            reply(client, 0)
            relay(client, upstream)
        except (OSError, ConnectionError, ValueError):
            pass
        finally:
            for s in (client, upstream):
                if s is not None:
                    try:
                        s.close()
                    except OSError:
                        pass

    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    if args.exit_with_parent:
        threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    write_atomically(args.port_file, "%d\n" % server.getsockname()[1])
    while True:
        client, _ = server.accept()
        threading.Thread(target=serve, args=(client,), daemon=True).start()


if __name__ == "__main__":
    main()
