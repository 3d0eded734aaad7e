"""What the load run mixes in so that fairness is measured, not assumed
(issue 26): a webhook target that takes seconds to answer (the operator's
notices and detached agents' resumes go to it), and a client that holds
idle and slow-drip connections open, opening new ones as the server closes
them (its header timeout)."""

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class SlowReceiver:
    """A webhook receiver on 127.0.0.1 that answers 200 after `delay`
    seconds; counts what it was sent."""

    def __init__(self, delay):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                with receiver.lock:
                    receiver.received += 1
                time.sleep(delay)
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.lock = threading.Lock()
        self.received = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()


class IdleSockets:
    """Holds `idle` connections that never send a byte and `drip`
    connections that send one header byte every few seconds; each one the
    server closes is opened again. `closed` counts the server's closes."""

    def __init__(self, base, idle, drip):
        host, port = base.removeprefix("http://").split(":")
        self.address = (host, int(port))
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.closed = 0
        self.threads = [
            threading.Thread(target=self._hold, args=(n < drip,), daemon=True)
            for n in range(idle + drip)
        ]
        for thread in self.threads:
            thread.start()

    def _hold(self, drip):
        while not self.stop.is_set():
            try:
                connection = socket.create_connection(self.address, timeout=5)
            except OSError:
                self.stop.wait(1)
                continue
            with connection:
                connection.settimeout(3)
                sent = b"GET /healthz HTTP/1.1\r\nX-Slow: "
                while not self.stop.is_set():
                    try:
                        if drip:
                            connection.sendall(sent[:1] or b"a")
                            sent = sent[1:]
                        if connection.recv(1) == b"":
                            break  # the server closed it
                    except socket.timeout:
                        continue
                    except OSError:
                        break
                else:
                    return
            with self.lock:
                self.closed += 1

    def close(self):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=10)
