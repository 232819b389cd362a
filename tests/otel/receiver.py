"""A loopback OTLP/HTTP receiver for Bridle's telemetry tests.

Serves POST /v1/logs, /v1/traces and /v1/metrics on 127.0.0.1 (port 0; the port is the first
line on stdout), decodes each protobuf body with the official definitions (opentelemetry-proto
from PyPI), and appends to OUT_DIR: `raw.bin` (every body as received, to search for secret
bytes) and `decoded.jsonl` (one line per request: path, headers, the request as JSON).

    receiver.py OUT_DIR [DELAY_SECONDS]

DELAY_SECONDS makes every answer late: a slow collector.
"""

import gzip
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

KINDS = {
    "/v1/logs": (logs_service_pb2.ExportLogsServiceRequest, logs_service_pb2.ExportLogsServiceResponse),
    "/v1/traces": (trace_service_pb2.ExportTraceServiceRequest, trace_service_pb2.ExportTraceServiceResponse),
    "/v1/metrics": (metrics_service_pb2.ExportMetricsServiceRequest, metrics_service_pb2.ExportMetricsServiceResponse),
}
OUT = sys.argv[1]
DELAY = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        kind = KINDS.get(self.path)
        if kind is None:
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        time.sleep(DELAY)
        request = kind[0]()
        request.ParseFromString(body)
        line = {"path": self.path, "headers": dict(self.headers), "request": MessageToDict(request)}
        with LOCK:
            with open(os.path.join(OUT, "raw.bin"), "ab") as raw:
                raw.write(body)
            with open(os.path.join(OUT, "decoded.jsonl"), "a") as decoded:
                decoded.write(json.dumps(line) + "\n")
        answer = kind[1]().SerializeToString()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
