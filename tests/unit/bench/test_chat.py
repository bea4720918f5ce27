"""Judging the answers of the gateway section's chat load (bench/benchlib/chat.py) and reading
HAProxy's server states, on bodies in the OpenAI wire format and HAProxy 2.6.12's own output."""
import json

from benchlib import chat

# A streamed chat completion as vLLM's OpenAI server sends it: one `data: <chunk>` event per
# token, the last chunk with finish_reason, then `data: [DONE]`.
CHUNK = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"Qwen","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}'
STREAM = "".join("data: %s\n\n" % CHUNK % (delta, finish) for delta, finish in (
    ('{"role":"assistant","content":""}', "null"), ('{"content":"Hello"}', "null"), ('{}', '"length"'))) + "data: [DONE]\n\n"
FULL = json.dumps({"id": "chatcmpl-2", "object": "chat.completion", "model": "Qwen",
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}})


def test_complete_answers_are_ok():
    assert chat.judge(True, 200, STREAM.encode()) == ("ok", "")
    assert chat.judge(False, 200, FULL.encode()) == ("ok", "")
    # CRLF line ends are as valid as LF in server-sent events.
    assert chat.judge(True, 200, STREAM.replace("\n", "\r\n").encode()) == ("ok", "")


def test_a_stream_without_its_end_is_truncated():
    cut = STREAM[:-len("data: [DONE]\n\n")]
    assert chat.judge(True, 200, cut.encode()) == ("truncated", "stream without its final data: [DONE]")
    # [DONE] sent without its blank line: the event is not ended, so it does not count.
    assert chat.judge(True, 200, (cut + "data: [DONE]").encode())[0] == "truncated"
    # Cut inside the last chunk.
    assert chat.judge(True, 200, STREAM[:len(STREAM) // 2].encode())[0] == "truncated"
    # [DONE] but no chunk with a finish_reason.
    no_finish = STREAM.replace('"finish_reason":"length"', '"finish_reason":null')
    assert chat.judge(True, 200, no_finish.encode()) == ("truncated", "stream without a finish_reason")
    assert chat.judge(True, 200, b"data: {not json\n\ndata: [DONE]\n\n") == ("truncated", "a stream event is not JSON")
    assert chat.judge(True, 200, b"") == ("truncated", "stream without its final data: [DONE]")


def test_a_body_cut_short_or_broken_is_truncated():
    assert chat.judge(False, 200, FULL[:40].encode()) == ("truncated", "body is not complete JSON")
    assert chat.judge(False, 200, FULL.replace('"stop"', "null").encode()) == ("truncated", "no finish_reason")
    # The whole stream read, then the connection reset: still judged truncated (it broke).
    assert chat.judge(True, 200, STREAM.encode(), "ConnectionResetError") == (
        "truncated", "broken while reading the body: ConnectionResetError")


def test_no_answer_or_another_status_failed():
    assert chat.judge(True, None, b"", "ConnectionRefusedError") == ("failed", "no answer: ConnectionRefusedError")
    assert chat.judge(False, None, b"", None) == ("failed", "no answer: no status line")
    assert chat.judge(False, 502, b"<html>502 Bad Gateway</html>") == ("failed", "HTTP 502")
    assert chat.judge(True, 503, b'{"error":{"message":"The server is shutting down."}}') == ("failed", "HTTP 503")


def test_tally_counts_and_reasons_most_frequent_first():
    answers = [{"stream": True, "verdict": "ok", "reason": ""},
               {"stream": False, "verdict": "failed", "reason": "HTTP 502"},
               {"stream": False, "verdict": "failed", "reason": "HTTP 502"},
               {"stream": True, "verdict": "truncated", "reason": "stream without its final data: [DONE]"}]
    assert chat.tally(answers) == {"sent": 4, "ok": 1, "failed": 2, "truncated": 1, "streams": 2, "bad": 3,
                                   "reasons": [["failed: HTTP 502", 2], ["truncated: stream without its final data: [DONE]", 1]]}
    assert chat.tally([])["bad"] == 0


def test_request_body_names_the_model_and_streams_when_asked():
    body = json.loads(chat.request_body("Qwen", 7, True))
    assert body["model"] == "Qwen" and body["stream"] is True and body["max_tokens"] == 8
    assert "7" in body["messages"][0]["content"]
    assert json.loads(chat.request_body("Qwen", 8, False))["stream"] is False


# HAProxy 2.6.12 (Debian 12, the sim image ascendfleet-sim/haproxy), GET /metrics, verbatim: a pool
# with two servers whose checks fail.
METRICS_2_6 = """# HELP haproxy_backend_active_servers Total number of active UP servers with a non-zero weight
# TYPE haproxy_backend_active_servers gauge
haproxy_backend_active_servers{proxy="pool_qwen"} 0
# HELP haproxy_server_status Current status of the service, per state label value.
# TYPE haproxy_server_status gauge
haproxy_server_status{proxy="pool_qwen",server="up_one",state="DOWN"} 1
haproxy_server_status{proxy="pool_qwen",server="up_one",state="UP"} 0
haproxy_server_status{proxy="pool_qwen",server="up_one",state="MAINT"} 0
haproxy_server_status{proxy="pool_qwen",server="up_one",state="DRAIN"} 0
haproxy_server_status{proxy="pool_qwen",server="up_one",state="NOLB"} 0
haproxy_server_status{proxy="pool_qwen",server="down_one",state="DOWN"} 1
haproxy_server_status{proxy="pool_qwen",server="down_one",state="UP"} 0
haproxy_server_status{proxy="pool_qwen",server="down_one",state="MAINT"} 0
haproxy_server_status{proxy="pool_qwen",server="down_one",state="DRAIN"} 0
haproxy_server_status{proxy="pool_qwen",server="down_one",state="NOLB"} 0
"""


# The same, from the bench's own gateway (role fleet_gateway) with its four servers UP, verbatim:
# pools and servers as the role names them.
METRICS_2_6_UP = """# HELP haproxy_server_status Current status of the service, per state label value.
# TYPE haproxy_server_status gauge
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-01:qwen",state="DOWN"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-01:qwen",state="UP"} 1
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-01:qwen",state="MAINT"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-01:qwen",state="DRAIN"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-01:qwen",state="NOLB"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-02:qwen",state="DOWN"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-02:qwen",state="UP"} 1
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-02:qwen",state="MAINT"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-02:qwen",state="DRAIN"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-02:qwen",state="NOLB"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-03:qwen",state="DOWN"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-03:qwen",state="UP"} 1
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-03:qwen",state="MAINT"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-03:qwen",state="DRAIN"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-03:qwen",state="NOLB"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-04:qwen",state="DOWN"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-04:qwen",state="UP"} 1
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-04:qwen",state="MAINT"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-04:qwen",state="DRAIN"} 0
haproxy_server_status{proxy="model:Qwen",server="h31c-bench-04:qwen",state="NOLB"} 0
"""


def test_server_states_from_haproxy_metrics():
    assert chat.server_states(METRICS_2_6) == {("pool_qwen", "up_one"): "DOWN", ("pool_qwen", "down_one"): "DOWN"}
    assert chat.server_states(METRICS_2_6_UP) == {("model:Qwen", "h31c-bench-%02d:qwen" % i): "UP" for i in range(1, 5)}
    assert chat.server_states("") == {}
