#!/usr/bin/python3
"""A tandem serve that answers badly, for tests, written from
proto/PROTOCOL.md ("MDP/Client") alone.

    badserver.py ENDPOINT MODE

Binds ENDPOINT (a ROUTER), takes one client request and answers it as
MODE says, then waits to be killed:

    junk          agent frames (MDP/Worker HEARTBEAT) every 0.2 s, never
                  a client reply
    no-outcome    its session accepted, in a FINAL: no outcome ever comes
    other-done    accepted; the end of another session (FINAL, with a
                  diff); then this session's end, exit_code 3
    escapes       accepted; output on stderr holding terminal escapes;
                  then this session's end, exit_code 3
    approved      accepted; the approved diff on stdout; this session's
                  end, exit_code 0, with its report
    error-escapes an error (FINAL) whose text holds terminal escapes
    lost-midway   accepted; the first half of the approved diff on
                  stdout; then the server is gone (it exits)
    resumed       (a server that took the session up again) accepted;
                  the whole approved diff on stdout; the end, exit_code 0
    ended         (the same, the session ended meanwhile) the end,
                  exit_code 0, the diff in its report alone
    resumed-other as resumed, with another diff
    resumed-short as resumed, with a diff shorter than the half sent
                  (a prefix of it)
"""
import json
import sys
import time

import zmq

CLIENT = b"MDPC02"
PARTIAL, FINAL = b"\x02", b"\x03"
SESSION = "20261125-000000-aaaaaaaa"
DIFF = ("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+b\n c\n"
        "--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n")


def main():
    endpoint, mode = sys.argv[1], sys.argv[2]
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    sock.bind(endpoint)
    frames = sock.recv_multipart()
    peer, service = frames[0], frames[3]

    def send(body, final=False):
        sock.send_multipart([peer, CLIENT, FINAL if final else PARTIAL,
                             service, json.dumps(body).encode()])

    accepted = {"tandem": 1, "type": "accepted", "session": SESSION,
                "dir": "/nowhere/.tandem/sessions/" + SESSION, "queued": 0}
    done = {"tandem": 1, "type": "done", "session": SESSION,
            "exit_code": 3, "status": "escalated"}
    if mode == "junk":
        while True:
            sock.send_multipart([peer, b"MDPW02", b"\x05"])
            time.sleep(0.2)
    elif mode == "no-outcome":
        send(accepted, final=True)
    elif mode == "other-done":
        send(accepted)
        send({"tandem": 1, "type": "done",
              "session": "20991231-000000-bbbbbbbb", "exit_code": 0,
              "status": "approved",
              "report": {"kind": "run", "final_diff_text":
                         "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+OTHER\n"}},
             final=True)
        send(done, final=True)
    elif mode == "escapes":
        send(accepted)
        send({"tandem": 1, "type": "output", "stream": "stderr",
              "text": "tandem: \x1b]0;PWNED\x07\x1b[2Jcleared\n"})
        send(done, final=True)
    elif mode == "error-escapes":
        sock.send_multipart([peer, CLIENT, FINAL, service, json.dumps(
            {"tandem": 1, "type": "error", "kind": "bad_request",
             "error": "no \x1b]0;PWNED\x07\x1b[2Jsuch task"}).encode()])
    elif mode == "lost-midway":
        send(accepted)
        send({"tandem": 1, "type": "output", "stream": "stdout",
              "text": DIFF[:len(DIFF) // 2]})
        time.sleep(0.5)  # sent (linger) before the socket goes
        sock.close(linger=2000)
        ctx.term()
        return
    elif mode in ("resumed", "resumed-other", "resumed-short"):
        diff = (DIFF if mode == "resumed"
                else DIFF[:8] if mode == "resumed-short"
                else DIFF.replace("a/x", "a/z"))
        send(accepted)
        send({"tandem": 1, "type": "output", "stream": "stdout",
              "text": diff})
        send({"tandem": 1, "type": "done", "session": SESSION,
              "exit_code": 0, "status": "approved",
              "report": {"kind": "run", "final_diff_text": diff}},
             final=True)
    elif mode == "ended":
        send({"tandem": 1, "type": "done", "session": SESSION,
              "exit_code": 0, "status": "approved",
              "report": {"kind": "run", "final_diff_text": DIFF}},
             final=True)
    elif mode == "approved":
        diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
        send(accepted)
        send({"tandem": 1, "type": "output", "stream": "stdout",
              "text": diff})
        send({"tandem": 1, "type": "done", "session": SESSION,
              "exit_code": 0, "status": "approved",
              "report": {"kind": "run", "final_diff_text": diff}},
             final=True)
    time.sleep(60)


if __name__ == "__main__":
    main()
