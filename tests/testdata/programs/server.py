# A line server for the host to talk to: each line comes back upper-cased
# with its sha256 and the server's thread count; "shutdown" stops it.
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
            self.wfile.write(b"%s %s threads=%d\n" % (line.upper(), digest.encode(), threading.active_count()))


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


with Server((sys.argv[1], int(sys.argv[2])), Handler) as srv:
    print("listening", flush=True)
    srv.serve_forever()
print("server stopped", flush=True)
