#!/usr/bin/env python3
"""An FTP (and explicit FTPS) origin for Ferry's tests: PyPI's pyftpdlib on 127.0.0.1 serving one directory.

One user (--user/--password) may read --root. Options make it misbehave on purpose:
  --lie-size N     SIZE answers N more than the file holds (negative: fewer); the data is the real file.
  --rate BYTES     each data connection sends at most BYTES per second (pyftpdlib's ThrottledDTPHandler).
  --masquerade IP  PASV replies name IP instead of 127.0.0.1 (EPSV is refused, so clients must use PASV).
  --tls-cert/--tls-key  explicit FTPS (AUTH TLS), TLS required on control and data connections.

Every RETR is logged to --log as one JSON line when its data connection closes:
  {"path": "/a.bin", "rest": 1234, "sent": 5678, "user": "ferry"}
(`rest` is the REST offset the client asked for, `sent` the bytes of file data sent on the data connection.)

Writes its port to --port-file and its pid to --pid-file once it listens; with --exit-with-parent it exits when
the process that started it is gone.
"""
import argparse
import json
import os
import threading
import time

from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler, ThrottledDTPHandler
from pyftpdlib.servers import FTPServer


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--user", default="ferry")
    parser.add_argument("--password", default="secret")
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--pid-file")
    parser.add_argument("--log", required=True)
    parser.add_argument("--lie-size", type=int, default=0)
    parser.add_argument("--rate", type=int, default=0)
    parser.add_argument("--masquerade")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--exit-with-parent", action="store_true")
    args = parser.parse_args()

    authorizer = DummyAuthorizer()
    authorizer.add_user(args.user, args.password, args.root, perm="elr")
    log_lock = threading.Lock()

    if args.tls_cert:
        from pyftpdlib.handlers import TLS_FTPHandler
        base = TLS_FTPHandler
    else:
        base = FTPHandler

    class Handler(base):
        def ftp_SIZE(self, path):
            if args.lie_size == 0:
                return super().ftp_SIZE(path)
            try:
                size = os.path.getsize(path)
            except OSError as error:
                self.respond("550 %s." % error.strerror)
                return
            self.respond("213 %d" % max(0, size + args.lie_size))

        def ftp_EPSV(self, line):
            if args.masquerade:
                self.respond("500 EPSV is disabled here: use PASV.")
                return
            return super().ftp_EPSV(line)

        def ftp_RETR(self, file):
            self._ferry_rest = self._restart_position
            self._ferry_path = self.fs.fs2ftp(file)
            return super().ftp_RETR(file)

        def on_file_sent(self, file):
            self._ferry_log(complete=True)

        def on_incomplete_file_sent(self, file):
            self._ferry_log(complete=False)

        def _ferry_log(self, complete):
            dtp = self.data_channel
            sent = dtp.get_transmitted_bytes() if dtp is not None else -1
            entry = {"path": getattr(self, "_ferry_path", None), "rest": getattr(self, "_ferry_rest", 0),
                     "sent": sent, "user": self.username, "complete": complete}
            with log_lock, open(args.log, "a") as f:
                f.write(json.dumps(entry) + "\n")

    Handler.authorizer = authorizer
    Handler.passive_ports = None
    Handler.permit_foreign_addresses = False
    if args.masquerade:
        Handler.masquerade_address = args.masquerade
    if args.rate:
        dtp = ThrottledDTPHandler
        dtp.read_limit = args.rate
        dtp.write_limit = args.rate
        Handler.dtp_handler = dtp
    if args.tls_cert:
        Handler.certfile = args.tls_cert
        Handler.keyfile = args.tls_key
        Handler.tls_control_required = True
        Handler.tls_data_required = True

    server = FTPServer(("127.0.0.1", 0), Handler)
    port = server.socket.getsockname()[1]
    if args.pid_file:
        write_atomically(args.pid_file, "%d\n" % os.getpid())
    write_atomically(args.port_file, "%d\n" % port)
    if args.exit_with_parent:
        threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    print("ftp origin listening on 127.0.0.1:%d pid %d" % (port, os.getpid()), flush=True)
    server.serve_forever(timeout=0.2)


if __name__ == "__main__":
    main()
