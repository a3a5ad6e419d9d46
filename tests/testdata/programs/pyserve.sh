# python3 serving the host: a socket server (server.py), then
# `python3 -m http.server` on the same port.
cd / || exit 90
python3 -u server.py 0.0.0.0 8000
echo "server.py exited $?"
exec python3 -u -m http.server 8000 --directory /
