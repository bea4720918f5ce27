#!/usr/bin/env python3
"""Stand-in MindCluster NPU Exporter for a sim host (test infrastructure only, never shipped).

    python3 /opt/ascendfleet-sim/npu/npu_exporter_sim.py [--port 8082] [--host 0.0.0.0]

Serves ``GET /metrics`` in the Prometheus text format with the metric names and labels that
MindCluster's documentation of NPU Exporter's Prometheus Metrics API shows
(https://www.hiascend.com/document/detail/en/mindcluster/730/clustersched/schedulingug/dlug_api_004.html):
``machine_npu_nums``, ``npu_chip_info_health_status`` (1 healthy, 0 not), ``npu_chip_info_error_code``,
``npu_chip_info_hbm_total_memory`` / ``npu_chip_info_hbm_used_memory`` (MB; 310P:
``npu_chip_info_total_memory`` / ``npu_chip_info_used_memory``), ``npu_chip_info_power``,
``npu_chip_info_temperature``, ``npu_chip_info_utilization``, each sample with the labels ``id``,
``model_name``, ``pcie_bus_info``, ``vdie_id``, ``container_name``, ``namespace``, ``pod_name``
and a millisecond timestamp, like the real exporter. ``GET /`` is its home page.

The figures are the simulated host's, read on every scrape the way the stand-in npu-smi reads
them (ascend_sim.py: the host profile, npu-sim-fault's runtime faults, HBM taken by running
containers), so a chip turned unhealthy with npu-sim-fault shows here too. Standard library only;
it imports nothing from the collection.
"""

import argparse
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ascend_sim  # noqa: E402  (the simulator beside this file)

LABELS = ("container_name", "id", "model_name", "namespace", "pcie_bus_info", "pod_name", "vdie_id")
HOME = ('<html>\n   <head><title>NPU-Exporter</title></head>\n   <body>\n   <h1 align="center">NPU-Exporter</h1>\n'
        '   <p align="center">Welcome to use NPU-Exporter,the Prometheus metrics url is http://ip:%d/metrics: '
        '<a href="./metrics">Metrics</a></p>\n   </body>\n   </html>\n')


def _escape(value):
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(profile, faults, live, now_ms):
    """The /metrics text of the host."""
    hbm_layout = profile["_layout"]["hbm"]
    families = [
        ("npu_chip_info_error_code", "the npu error code", lambda v: 0 if v["health"] == "OK" else 1),
        ("npu_chip_info_health_status", "the npu health status", lambda v: 1 if v["health"] == "OK" else 0),
        ("npu_chip_info_power", "the npu power", lambda v: v.get("power") if isinstance(v.get("power"), (int, float)) else 0),
        ("npu_chip_info_temperature", "the npu temperature", lambda v: v.get("temp", 0)),
        ("npu_chip_info_utilization", "the ai core utilization", lambda v: v.get("aicore", 0)),
    ]
    if hbm_layout:
        families += [
            ("npu_chip_info_hbm_total_memory", "the npu hbm total memory", lambda v: v["hbm"][1]),
            ("npu_chip_info_hbm_used_memory", "the npu hbm used memory", lambda v: v["hbm"][0]),
        ]
    else:
        families += [
            ("npu_chip_info_total_memory", "the npu total memory", lambda v: v["memory"][1]),
            ("npu_chip_info_used_memory", "the npu used memory", lambda v: v["memory"][0]),
        ]
    views = []
    for npu, chip in ascend_sim.all_chips(profile):
        view = ascend_sim.chip_view(profile, npu, chip, faults, live)
        labels = {"container_name": "", "id": chip["device"], "model_name": "%s-Ascend-V1" % profile["model"],
                  "namespace": "", "pcie_bus_info": chip["bus_id"], "pod_name": "",
                  "vdie_id": ascend_sim._die_id("V", chip["device"]).replace(" ", "-")}
        views.append((view, ",".join('%s="%s"' % (k, _escape(labels[k])) for k in LABELS)))
    lines = ["# HELP machine_npu_nums Amount of npu installed on the machine.", "# TYPE machine_npu_nums gauge",
             "machine_npu_nums %d" % len(views)]
    for name, help_text, value in families:
        lines += ["# HELP %s %s" % (name, help_text), "# TYPE %s gauge" % name]
        for view, labels in views:
            lines.append("%s{%s} %s %d" % (name, labels, value(view), now_ms))
    return "\n".join(lines) + "\n"


def make_handler(port):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):
            pass

        def reply(self, status, body, ctype):
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                try:
                    profile = ascend_sim.load_profile(ascend_sim.profile_path())
                    text = render(profile, ascend_sim.effective_faults(profile), ascend_sim.live_processes(),
                                  int(time.time() * 1000))
                except ascend_sim.SimError as exc:
                    self.reply(500, "%s\n" % exc, "text/plain; charset=utf-8")
                    return
                self.reply(200, text, "text/plain; version=0.0.4; charset=utf-8")
            elif path == "/":
                self.reply(200, HOME % port, "text/html; charset=utf-8")
            else:
                self.reply(404, "404 page not found\n", "text/plain; charset=utf-8")
    return Handler


def main(argv=None):
    parser = argparse.ArgumentParser(description="Stand-in MindCluster NPU Exporter (simulator)")
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8082)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer((args.host, args.port), make_handler(args.port))
    server.daemon_threads = True
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
