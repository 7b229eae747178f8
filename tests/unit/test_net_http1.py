"""The Contract C hop's HTTP/1.1 client against real sockets: keep-alive, servers that close, timeouts, TLS.

The servers here are raw sockets on 127.0.0.1, so each test decides exactly how the server behaves on the
wire (closing an idle connection, answering chunked, never answering) and counts connections and requests.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from windtunnel._net.http1 import Http1Client, Http1Error, Http1Timeout, Http1TooLarge


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: bytes


Answer = Callable[[Request], bytes | None]  # the raw response bytes, or None to drop the connection


@dataclass
class RawServer:
    """Answers each request with `answer`; `close_after_answer` ends the connection after every answer."""

    answer: Answer
    close_after_answer: bool = False
    tls: ssl.SSLContext | None = None
    connections: int = 0
    requests: list[Request] = field(default_factory=list)

    def serve(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            reader = conn.makefile("rb")
            while (request := _read_request(reader)) is not None:
                self.requests.append(request)
                raw = self.answer(request)
                if raw is None:
                    break
                conn.sendall(raw)
                if self.close_after_answer:
                    break
        except (OSError, ssl.SSLError):
            pass
        finally:
            conn.close()


def _read_request(reader: object) -> Request | None:
    line = reader.readline()  # type: ignore[attr-defined]
    if not line:
        return None
    headers: dict[str, str] = {}
    while header := reader.readline().decode().strip():  # type: ignore[attr-defined]
        name, _, value = header.partition(":")
        headers[name.strip().lower()] = value.strip()
    body = reader.read(int(headers.get("content-length", "0")))  # type: ignore[attr-defined]
    return Request(line.decode().split()[1], headers, body)


def json_answer(request: Request, *, extra_headers: str = "") -> bytes:
    body = json.dumps({"path": request.path, "got": json.loads(request.body or b"null")}).encode()
    head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n{extra_headers}\r\n"
    return head.encode() + body


@pytest.fixture
def serve() -> Iterator[Callable[[RawServer], str]]:
    listeners: list[socket.socket] = []

    def start(server: RawServer) -> str:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listeners.append(listener)
        threading.Thread(target=server.serve, args=(listener,), daemon=True).start()
        scheme = "https" if server.tls else "http"
        return f"{scheme}://127.0.0.1:{listener.getsockname()[1]}"

    yield start
    for listener in listeners:
        listener.close()


def test_one_connection_carries_every_request(serve: Callable[[RawServer], str]) -> None:
    server = RawServer(json_answer)
    with Http1Client(serve(server) + "/prefix/", timeout=5) as client:
        for index in range(20):
            response = client.post_json("/wt/inject", {"n": index, "text": "grüße"})
            assert response.status_code == 200
            assert response.json() == {"path": "/prefix/wt/inject", "got": {"n": index, "text": "grüße"}}
    assert server.connections == 1
    assert server.requests[0].headers["content-type"] == "application/json"


def test_a_connection_the_server_closed_while_idle_is_replaced_not_failed(
    serve: Callable[[RawServer], str],
) -> None:
    server = RawServer(json_answer, close_after_answer=True)  # like a keep-alive timeout after every answer
    with Http1Client(serve(server), timeout=5) as client:
        for index in range(5):
            client.post_json("/x", {"n": index})
            _wait_closed(client)  # the server's close has reached the client, as after an idle timeout
    assert [json.loads(request.body)["n"] for request in server.requests] == [0, 1, 2, 3, 4]
    assert server.connections == 5


def test_posts_from_several_threads_take_turns_on_the_one_connection(
    serve: Callable[[RawServer], str],
) -> None:
    server = RawServer(json_answer)
    failures: list[BaseException] = []
    with Http1Client(serve(server), timeout=5) as client:

        def post(worker: int) -> None:
            try:
                for index in range(20):
                    assert client.post_json("/x", {"w": worker, "n": index}).json()["got"] == {
                        "w": worker,
                        "n": index,
                    }
            except BaseException as exc:
                failures.append(exc)

        workers = [threading.Thread(target=post, args=(worker,)) for worker in range(4)]
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join()
    assert failures == []
    assert len(server.requests) == 80
    assert server.connections == 1


def test_connection_close_and_chunked_answers(serve: Callable[[RawServer], str]) -> None:
    def chunked(request: Request) -> bytes:
        return (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            b'5\r\n{"a":\r\n3\r\n 1}\r\n0\r\n\r\n'
        )

    server = RawServer(chunked)
    with Http1Client(serve(server), timeout=5) as client:
        assert client.post_json("/x", {}).json() == {"a": 1}
        assert client.post_json("/x", {}).json() == {"a": 1}
    assert server.connections == 2


def test_no_answer_in_time_is_a_timeout_and_the_request_is_not_resent(
    serve: Callable[[RawServer], str],
) -> None:
    answered = threading.Event()
    server = RawServer(lambda request: (answered.wait(5), None)[1])
    client = Http1Client(serve(server), timeout=0.2)
    with pytest.raises(Http1Timeout, match=r"no whole answer within 0\.2s"):
        client.post_json("/x", {"n": 1})
    answered.set()
    assert len(server.requests) == 1


def test_a_dropped_request_fails_once_without_a_retry(serve: Callable[[RawServer], str]) -> None:
    server = RawServer(lambda request: None)  # reads the request, then closes without an answer
    client = Http1Client(serve(server), timeout=5)
    with pytest.raises(Http1Error, match="RemoteDisconnected"):
        client.post_json("/x", {"n": 1})
    assert len(server.requests) == 1


def test_nobody_listening_is_a_transport_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, never listening: connections are refused
        with pytest.raises(Http1Error, match="ConnectionRefusedError") as caught:
            Http1Client(f"http://127.0.0.1:{port}", timeout=5).post_json("/x", {})
    assert not isinstance(caught.value, Http1Timeout)


def test_https_verifies_the_server(serve: Callable[[RawServer], str], tmp_path: Path) -> None:
    server_context, trusting = _tls_pair(tmp_path)
    url = serve(RawServer(json_answer, tls=server_context))
    with Http1Client(url, timeout=5, ssl_context=trusting) as client:
        assert client.post_json("/x", {"n": 1}).json()["got"] == {"n": 1}
    with pytest.raises(Http1Error, match="CERTIFICATE_VERIFY_FAILED"):
        Http1Client(url, timeout=5, ssl_context=ssl.create_default_context()).post_json("/x", {})


def test_only_http_urls() -> None:
    with pytest.raises(ValueError, match="not an http"):
        Http1Client("ftp://example.invalid", timeout=1)


def _wait_closed(client: Http1Client) -> None:
    connection = client._connection
    assert connection is not None and connection.sock is not None
    connection.sock.settimeout(5)
    assert connection.sock.recv(1, socket.MSG_PEEK) == b""  # the server's FIN has arrived


def _tls_pair(tmp_path: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A test-only self-signed certificate for 127.0.0.1 (generated here, never stored)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "windtunnel test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_file, key_file)
    return server, ssl.create_default_context(cafile=str(cert_file))


def ok(body: bytes) -> bytes:
    return f"HTTP/1.1 200 OK\r\ncontent-length: {len(body)}\r\n\r\n".encode() + body


def chunked_ok(body: bytes) -> bytes:
    chunks = b"".join(
        f"{len(body[i : i + 500]):x}\r\n".encode() + body[i : i + 500] + b"\r\n"
        for i in range(0, len(body), 500)
    )
    return b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"


@dataclass
class TrickleServer(RawServer):
    """Reads one request, then sends `prompt` at once and `trickled` one byte every `every` seconds."""

    prompt: bytes = b""
    trickled: bytes = b""
    every: float = 0.05

    def _connection(self, conn: socket.socket) -> None:
        try:
            if _read_request(conn.makefile("rb")) is None:
                return
            conn.sendall(self.prompt)
            for byte in self.trickled:
                conn.sendall(bytes([byte]))
                time.sleep(self.every)
        except OSError:
            pass
        finally:
            conn.close()


@pytest.mark.parametrize("where", ["head", "body"])
def test_an_answer_trickled_byte_by_byte_cannot_outlast_the_deadline(
    serve: Callable[[RawServer], str], where: str
) -> None:
    body = json.dumps({"content": "x" * 200}).encode()
    head = f"HTTP/1.1 200 OK\r\ncontent-length: {len(body)}\r\nx-pad: {'p' * 200}\r\n\r\n".encode()
    prompt, trickled = (b"", head + body) if where == "head" else (head, body)
    server = TrickleServer(answer=lambda request: None, prompt=prompt, trickled=trickled)
    started = time.monotonic()
    with Http1Client(serve(server), timeout=0.5) as client, pytest.raises(Http1Timeout):
        client.post_json("/wt/inject", {})
    assert time.monotonic() - started < 2.0  # a per-read timeout would sit through the whole ~25 s trickle


def test_an_answer_over_the_size_limit_is_refused_unread(serve: Callable[[RawServer], str]) -> None:
    big = json.dumps({"content": "x" * 5000}).encode()
    announced = Http1Client(serve(RawServer(lambda request: ok(big))), timeout=5, max_response_bytes=1000)
    with announced, pytest.raises(Http1TooLarge, match=f"announces {len(big)} bytes, more than the limit"):
        announced.post_json("/x", {})
    chunked = Http1Client(
        serve(RawServer(lambda request: chunked_ok(big))), timeout=5, max_response_bytes=1000
    )
    with chunked, pytest.raises(Http1TooLarge, match="ran past 1000 bytes"):
        chunked.post_json("/x", {})
    small = RawServer(lambda request: ok(b'{"a": 1}'))
    with Http1Client(serve(small), timeout=5, max_response_bytes=1000) as client:
        assert client.post_json("/x", {}).json() == {"a": 1}
