#!/usr/bin/python3
"""A scripted MDP/0.2 agent for tests, written from proto/PROTOCOL.md.

    scripted.py ENDPOINT SERVICE NAME PLAN...

Connects a DEALER with ZMQ_ROUTING_ID NAME, says READY for SERVICE, and
answers one REQUEST per PLAN word, in order, then exits:

    garbage      a FINAL whose body is not JSON
    wrong-type   an audit_reply where a code_reply is due (or the reverse)
    wrong-id     a well-formed reply for another task id
    wrong-addr   a FINAL under another client address than the request's
    ack-then-nothing  a progress PARTIAL, then heartbeats only, never a
                 FINAL (until the orchestrator says DISCONNECT)
    edit:PATH    a code_reply writing "fixed\\n" to PATH
    audit-places an audit_reply: one passing required skill "check"
                 whose locations point outside the workspace, at a file
                 that is not there, and at x.txt; an approving critique
                 with a minor issue placed at /etc/shadow
    audit-escape an audit_reply: one passing required skill "check"
                 whose one location is a file name with escape codes

After a DISCONNECT it reconnects on a new socket and says READY again,
as the protocol says. Heartbeats every 100 ms (faster than any test's
broker expects). Exits 0 when the plan is done, 3 when the orchestrator
stays silent for 60 s.
"""
import json
import sys
import time

import zmq

HEADER = b"MDPW02"
READY, REQUEST, PARTIAL, FINAL, HEARTBEAT, DISCONNECT = (
    bytes([c]) for c in range(1, 7))


def connect(ctx, endpoint, name, service):
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.ROUTING_ID, name.encode())
    s.setsockopt(zmq.LINGER, 0)
    s.connect(endpoint)
    s.send_multipart([HEADER, READY, service.encode()])
    return s


def reply_for(step, request):
    kind = request.get("type")
    ids = {"tandem": 1, "task_id": request["task_id"],
           "attempt": request["attempt"]}
    want = "code_reply" if kind == "code" else "audit_reply"
    if step == "garbage":
        return b"{not json"
    if step == "wrong-type":
        other = "audit_reply" if want == "code_reply" else "code_reply"
        return json.dumps(dict(ids, type=other)).encode()
    if step == "wrong-id":
        return json.dumps(dict(ids, type="error", task_id="someone-else",
                               error="not mine")).encode()
    if step.startswith("edit:"):
        edit = {"kind": "write", "path": step[5:], "replace": "fixed\n"}
        return json.dumps(dict(ids, type="code_reply",
                               rationale="scripted", edits=[edit],
                               usage={})).encode()
    if step == "audit-places":
        places = [{"file": "../../../../etc/passwd", "line": 1},
                  {"file": "nope.c", "line": 3},
                  {"file": "x.txt", "line": 1}]
        skill = {"name": "check", "status": "pass", "required": True,
                 "exit_code": 0, "duration_ms": 1, "command": "check",
                 "output": "ok\n", "locations": places}
        issue = {"type": "style", "severity": "minor",
                 "file": "/etc/shadow", "line": 2,
                 "description": "a place that is not in the workspace",
                 "evidence": "scripted"}
        critique = {"verdict": "approve", "confidence": 0.95,
                    "issues": [issue], "summary": "scripted"}
        return json.dumps(dict(ids, type="audit_reply", skills=[skill],
                               critique=critique, usage={})).encode()
    if step == "audit-escape":
        places = [{"file": "\x1b]0;pwned\x07\x1b[31mred.c", "line": 1}]
        skill = {"name": "check", "status": "pass", "required": True,
                 "exit_code": 0, "duration_ms": 1, "command": "check",
                 "output": "ok\n", "locations": places}
        critique = {"verdict": "approve", "confidence": 0.95,
                    "issues": [], "summary": "scripted"}
        return json.dumps(dict(ids, type="audit_reply", skills=[skill],
                               critique=critique, usage={})).encode()
    raise SystemExit("scripted.py: unknown plan word " + step)


def main():
    endpoint, service, name = sys.argv[1:4]
    plan = sys.argv[4:]
    ctx = zmq.Context()
    sock = connect(ctx, endpoint, name, service)
    last_heard = time.monotonic()
    next_beat = 0.0
    while plan:
        if time.monotonic() >= next_beat:
            sock.send_multipart([HEADER, HEARTBEAT])
            next_beat = time.monotonic() + 0.1
            if time.monotonic() - last_heard > 60:
                sys.exit(3)
        if sock.poll(100):
            frames = sock.recv_multipart()
            last_heard = time.monotonic()
            if frames[0] == b"":
                frames = frames[1:]
            command = frames[1]
            if command == DISCONNECT:
                sock.close()
                sock = connect(ctx, endpoint, name, service)
                continue
            if command != REQUEST:
                continue
            address, body = frames[2], frames[4]
            step = plan.pop(0)
            if step == "ack-then-nothing":
                progress = b'{"tandem":1,"type":"progress","chars":0,' \
                    b'"phase":"started"}'
                sock.send_multipart([HEADER, PARTIAL, address, b"",
                                     progress])
                continue
            if step == "wrong-addr":
                sock.send_multipart([HEADER, FINAL, address + b"-x", b"",
                                     b"{}"])
                continue
            sock.send_multipart([HEADER, FINAL, address, b"",
                                 reply_for(step, json.loads(body))])
    sock.close()
    ctx.term()


if __name__ == "__main__":
    main()
