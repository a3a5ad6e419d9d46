# A line server for the host to talk to: each line comes back upper-cased
# with its sha256 and whether a thread of its own serves the connection
# (the live thread count is not printed: a finished connection's thread
# may or may not have ended yet, on Linux too); "shutdown" stops it.
import hashlib, socketserver, sys, threading


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            line = line.rstrip(b"\n")
            if line == b"shutdown":
                self.wfile.write(b"bye\n")
                threading.Thread(target=self.server.shutdown).start()
                return
            digest = hashlib.sha256(line).hexdigest()[:16]
            own = threading.current_thread() is not threading.main_thread()
            self.wfile.write(b"%s %s own_thread=%d\n" % (line.upper(), digest.encode(), own))


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


with Server((sys.argv[1], int(sys.argv[2])), Handler) as srv:
    print("listening", flush=True)
    srv.serve_forever()
print("server stopped", flush=True)
