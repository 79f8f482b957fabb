"""The requests the aria2 suite sends to Ferry and to a real `aria2c --enable-rpc` alike: every answer (HTTP
status, code, message, id) must be the same. `TOKEN` is the secret both were started with."""

TOKEN = "T-aria2-suite"


def error_cases():
    secret = "token:" + TOKEN
    return [
        ("body that is not JSON", b"not json"),
        ("request without id", {"jsonrpc": "2.0", "method": "aria2.getVersion", "params": [secret]}),
        ("method not a string", {"jsonrpc": "2.0", "id": 1, "method": 5, "params": [secret]}),
        ("params not an array", {"jsonrpc": "2.0", "id": 1, "method": "aria2.tellActive", "params": {}}),
        ("unknown method", {"jsonrpc": "2.0", "id": 1, "method": "aria2.nope", "params": [secret]}),
        ("wrong secret", {"jsonrpc": "2.0", "id": 1, "method": "aria2.tellActive", "params": ["token:wrong"]}),
        ("no secret", {"jsonrpc": "2.0", "id": 1, "method": "aria2.getVersion"}),
        ("wrong secret before unknown method", {"jsonrpc": "2.0", "id": 1, "method": "aria2.nope", "params": ["token:x"]}),
        ("unknown gid", {"jsonrpc": "2.0", "id": 1, "method": "aria2.tellStatus", "params": [secret, "2089b05ecca3d829"]}),
        ("malformed gid", {"jsonrpc": "2.0", "id": 1, "method": "aria2.tellStatus", "params": [secret, "zz"]}),
        ("missing parameter", {"jsonrpc": "2.0", "id": 1, "method": "aria2.tellStatus", "params": [secret]}),
        ("parameter of the wrong type", {"jsonrpc": "2.0", "id": 1, "method": "aria2.tellStatus", "params": [secret, 5]}),
        ("negative num", {"jsonrpc": "2.0", "id": 1, "method": "aria2.tellWaiting", "params": [secret, 0, -1]}),
        ("addUri without URIs", {"jsonrpc": "2.0", "id": 1, "method": "aria2.addUri", "params": [secret, []]}),
        ("bad option value", {"jsonrpc": "2.0", "id": 1, "method": "aria2.addUri",
                              "params": [secret, ["http://127.0.0.1:9/x"], {"split": "abc"}]}),
        ("bad changePosition how", {"jsonrpc": "2.0", "id": 1, "method": "aria2.changePosition",
                                    "params": [secret, "2089b05ecca3d829", 0, "BAD"]}),
        ("batch", [{"jsonrpc": "2.0", "id": 1, "method": "aria2.nope", "params": [secret]}, 5, {"id": 3},
                   {"jsonrpc": "2.0", "id": 4, "method": "system.listNotifications"}]),
        ("multicall", {"jsonrpc": "2.0", "id": 1, "method": "system.multicall", "params": [[
            {"methodName": "aria2.nope", "params": [secret]}, {"methodName": "aria2.tellActive", "params": ["token:x"]},
            5, {"methodName": "system.multicall", "params": [[]]}]]}),
        ("multicall without its list", {"jsonrpc": "2.0", "id": 1, "method": "system.multicall", "params": [secret]}),
        ("empty batch", []),
    ]
