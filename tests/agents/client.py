#!/usr/bin/python3
"""A client of tandem serve for tests, written from proto/PROTOCOL.md
("MDP/Client") alone.

    client.py ENDPOINT submit REPO TASK
        Submit TASK for the repository REPO (made absolute here), print
        each reply's type on stderr and the session's output as it
        comes (with CLIENT_SESSION=ID set, the id it proposes), then "status: STATUS" and the report's iterations on
        stdout. Exits with the done reply's exit_code, or 10 + n for an
        error reply (n: 1 bad_request, 2 config, 3 busy, 4 stopping,
        5 not_found, 6 failed, 7 forbidden).

    client.py ENDPOINT answer REPO SESSION ANSWER [TEXT]
        Answer a session that waits for a person (ANSWER: approve,
        reject, guide or budget; TEXT is the reason or the guidance, or
        a budget's iterations, 1 when left out, 0 for none at all).
        Print "error KIND: MESSAGE" for an error reply, else "status:
        STATUS" and "exit: CODE", on stdout; exit 0 either way once a
        FINAL came.

    client.py ENDPOINT bad
        Send what a server must refuse and survive: a message that is
        not MDP, a REQUEST for an agent's service, a body that is not
        JSON, one of another version, and a submit without a repo. Print
        each error reply's kind on stdout; exit 0 when each well-framed
        one got an error FINAL.

With CLIENT_KEY=NAME.key and CLIENT_SERVER_KEY=NAME.pub set, it talks
over CURVE with that key pair, to the server of that public key.

Exits 3 when the server stays silent for 20 s.
"""
import json
import os
import sys

import zmq

CLIENT = b"MDPC02"
REQUEST, PARTIAL, FINAL = b"\x01", b"\x02", b"\x03"
KINDS = ["bad_request", "config", "busy", "stopping", "not_found", "failed",
         "forbidden"]


def read_key(path):
    """The lines "public-key = KEY" and "secret-key = KEY" of a key file."""
    with open(path) as f:
        return dict(l.split(" = ", 1) for l in f.read().splitlines()
                    if " = " in l)


def connect(endpoint):
    ctx = zmq.Context.instance()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    if os.environ.get("CLIENT_KEY"):
        keys = read_key(os.environ["CLIENT_KEY"])
        s.curve_serverkey = \
            read_key(os.environ["CLIENT_SERVER_KEY"])["public-key"].encode()
        s.curve_publickey = keys["public-key"].encode()
        s.curve_secretkey = keys["secret-key"].encode()
    s.connect(endpoint)
    return s


def request(s, service, body):
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    s.send_multipart([CLIENT, REQUEST, service.encode(), body])


def replies(s):
    """Yield (final, body) until the FINAL."""
    while True:
        if not s.poll(20000):
            print("client.py: the server is silent", file=sys.stderr)
            sys.exit(3)
        frames = s.recv_multipart()
        if len(frames) != 4 or frames[0] != CLIENT or \
                frames[1] not in (PARTIAL, FINAL):
            print("client.py: not an MDP/Client reply: %r" % frames[:2],
                  file=sys.stderr)
            sys.exit(4)
        body = json.loads(frames[3].decode("utf-8"))
        assert body["tandem"] == 1, body
        final = frames[1] == FINAL
        yield final, body
        if final:
            return


def submit(endpoint, repo, task):
    s = connect(endpoint)
    body = {"tandem": 1, "type": "submit", "repo": os.path.abspath(repo),
            "task": task}
    if os.environ.get("CLIENT_SESSION"):
        body["session"] = os.environ["CLIENT_SESSION"]
    request(s, "tandem.submit", body)
    for final, body in replies(s):
        kind = body["type"]
        print("reply: %s" % kind, file=sys.stderr)
        if kind == "accepted":
            print("session: %s" % body["session"])
        elif kind == "output":
            stream = sys.stderr if body["stream"] == "stderr" else sys.stdout
            stream.write(body["text"])
        elif kind == "done":
            report = body["report"] or {}
            print("status: %s" % body["status"])
            print("iterations: %s" % report.get("iterations"))
            return body["exit_code"]
        elif kind == "error":
            print("error: %s: %s" % (body["kind"], body["error"]),
                  file=sys.stderr)
            return 10 + KINDS.index(body["kind"]) + 1
    return 5


def answer(endpoint, repo, session, kind, text=None):
    s = connect(endpoint)
    body = {"tandem": 1, "type": "answer", "repo": os.path.abspath(repo),
            "session": session, "answer": kind}
    if kind == "budget":
        # TEXT: the iterations to grant (default 1; 0: none at all)
        if int(text if text is not None else 1):
            body["iterations"] = int(text if text is not None else 1)
    elif text is not None:
        body["text"] = text
    request(s, "tandem.answer", body)
    for final, reply in replies(s):
        if reply["type"] == "error":
            print("error %s: %s" % (reply["kind"], reply["error"]))
        elif reply["type"] == "done":
            print("status: %s" % reply.get("status"))
            print("exit: %s" % reply.get("exit_code"))
    return 0


def bad(endpoint):
    s = connect(endpoint)
    # not MDP at all: dropped without an answer
    s.send_multipart([b"HELLO", b"\x01"])
    s.send_multipart([CLIENT, b"\x07", b"tandem.submit", b"{}"])
    cases = [
        ("coder", {"tandem": 1, "type": "code", "task_id": "x",
                   "attempt": 1, "task": "rm -rf /"}),
        ("tandem.submit", b"this is not json"),
        ("tandem.submit", {"tandem": 2, "type": "submit"}),
        ("tandem.submit", {"tandem": 1, "type": "submit", "task": "x"}),
    ]
    ok = True
    for service, body in cases:
        request(s, service, body)
        for final, reply in replies(s):
            if final:
                print(reply.get("kind"))
                ok = ok and reply["type"] == "error"
    return 0 if ok else 1


def main():
    if len(sys.argv) == 5 and sys.argv[2] == "submit":
        sys.exit(submit(sys.argv[1], sys.argv[3], sys.argv[4]))
    if len(sys.argv) in (6, 7) and sys.argv[2] == "answer":
        sys.exit(answer(*sys.argv[1:2], *sys.argv[3:]))
    if len(sys.argv) == 3 and sys.argv[2] == "bad":
        sys.exit(bad(sys.argv[1]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    main()
