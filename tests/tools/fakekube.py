#!/usr/bin/env python3
"""fakekube: a small Kubernetes API server for the tests, serving one namespaced custom resource, Kuadrant's
DNSRecord (kuadrant.io/v1alpha1, with a status subresource), the way the real one does, so that kubectl and
glbd's client can be tested on a machine without a cluster (tests/system/fakekube.sh drives it with kubectl).

    fakekube.py ADDR PORT READY_FILE [--token-file F] [--state F] [--tls CERT_AND_KEY_PEM]

Serves discovery (/api, /api/v1, /apis, /apis/kuadrant.io/v1alpha1, /version), and for dnsrecords: list (all
namespaces or one, labelSelector, in pages with limit and continue; a continue token older than the
history is 410 Gone), get, create (status dropped, as for any resource with a status subresource), replace,
merge-patch of the object and of /status (a metadata.resourceVersion in the body is a precondition: 409 when
stale), delete (an object with metadata.finalizers is only given a deletionTimestamp, and goes when a patch
removes its last finalizer; none may be added meanwhile), and watch (chunked JSON lines, resourceVersion, allowWatchBookmarks, timeoutSeconds, label-selector
transitions as ADDED/DELETED, ERROR 410 for a compacted resourceVersion). With --token-file every request
needs "Authorization: Bearer <the file's content>" (read at each request, so a test can rotate it); 401
otherwise (kubectl sends a token only over TLS: --tls serves HTTPS with the given certificate and key). With
--state the objects survive a restart. Test controls (no token needed):
    POST /fake/compact   forget the event history: a watch from an older resourceVersion gets ERROR 410
    POST /fake/expire    send ERROR 410 to every open watch and end it
    GET  /fake/requests  the requests seen, one per line ("METHOD path?query")
Core v1 Secrets (namespaced): create, get, list, delete (no watch), for a DNSRecord's additionalHeadersRef;
each GET of one is counted in /fake/requests like any request.
OpenAPI v3 (/openapi/v3 and the group's document) says, as the real server does, that writes take
fieldValidation: kubectl then validates on the server (no --validate=false needed), and a DNSRecord created
or replaced is checked against the schema of docker/k8s/crd/dnsrecords.yaml (required fields and types: 422
Invalid with the API server's wording, the fields named as it names them).
Binds only the address given (the tests use 127.0.0.x)."""
import base64
import json
import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

GROUP, VERSION, PLURAL, KIND = "kuadrant.io", "v1alpha1", "dnsrecords", "DNSRecord"
API = f"/apis/{GROUP}/{VERSION}"
CRD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docker", "k8s", "crd", "dnsrecords.yaml")


def crd_schema():
    """The openAPIV3Schema of the repository's DNSRecord CRD (PyYAML: python3-yaml, which the tests install)."""
    import yaml
    crd = yaml.safe_load(open(CRD))
    return next(v for v in crd["spec"]["versions"] if v["name"] == VERSION)["schema"]["openAPIV3Schema"]


SCHEMA_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int, "number": (int, float)}


def schema_errors(value, schema, path):
    """What the API server says of VALUE against a structural SCHEMA, as (reason, field, message): "Required value",
    or "Invalid value: \"GOT\": FIELD in body must be of type T: \"GOT\"" (its wording)."""
    want = schema.get("type")
    if want and not (isinstance(value, SCHEMA_TYPES[want]) and not (want in ("integer", "number") and
                                                                     isinstance(value, bool))):
        got = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
            type(value), "number" if isinstance(value, (int, float)) else "unknown")
        field = path.lstrip(".")
        return [("FieldValueTypeInvalid", field, f'Invalid value: "{got}": {field} in body must be of type {want}: "{got}"')]
    errors = []
    if isinstance(value, dict):
        errors += [("FieldValueRequired", f"{path}.{r}".lstrip("."), "Required value")
                   for r in schema.get("required", []) if r not in value]
        for k, sub in (schema.get("properties") or {}).items():
            if k in value:
                errors += schema_errors(value[k], sub, f"{path}.{k}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            errors += schema_errors(item, schema["items"], f"{path}[{i}]")
    return errors


def openapi_group():
    """The group's OpenAPI v3 document as kubectl reads it: the schema, and the paths whose writes take
    fieldValidation (so that kubectl validates on the server)."""
    gvk = {"group": GROUP, "version": VERSION, "kind": KIND}
    field_validation = [{"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": True}}]
    one = {verb: {"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": verb, "parameters": field_validation,
                  "responses": {"200": {"description": "OK"}}} for verb in ("put", "patch")}
    many = {"post": {"x-kubernetes-group-version-kind": gvk, "x-kubernetes-action": "post",
                     "parameters": field_validation, "responses": {"201": {"description": "Created"}}}}
    schema = dict(crd_schema(), **{"x-kubernetes-group-version-kind": [gvk]})
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0-fakekube"},
            "paths": {f"{API}/namespaces/{{namespace}}/{PLURAL}/{{name}}": one,
                      f"{API}/namespaces/{{namespace}}/{PLURAL}": many},
            "components": {"schemas": {f"io.kuadrant.{VERSION}.{KIND}": schema}}}


class Store:
    def __init__(self, state_file):
        self.lock = threading.Condition()
        self.objects = {}  # (namespace, name) -> object
        self.secrets = {}  # (namespace, name) -> Secret (not kept across a restart)
        self.events = []   # (resourceVersion, type, object, previous object or None), oldest first
        self.rv = 1000
        self.oldest = 0    # watches from below this get 410
        self.expired = 0   # bumped by /fake/expire
        self.state_file = state_file
        if state_file:
            try:
                with open(state_file) as f:
                    saved = json.load(f)
                self.rv = saved["rv"]
                self.oldest = self.rv  # history is not kept across a restart
                for o in saved["objects"]:
                    self.objects[(o["metadata"]["namespace"], o["metadata"]["name"])] = o
            except FileNotFoundError:
                pass

    def save(self):
        if self.state_file:
            with open(self.state_file + ".tmp", "w") as f:
                json.dump({"rv": self.rv, "objects": list(self.objects.values())}, f)
            import os
            os.replace(self.state_file + ".tmp", self.state_file)

    def record(self, kind, obj, prev=None):  # with the lock held; prev: the object before (DELETED: itself)
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.events.append((self.rv, kind, json.loads(json.dumps(obj)), prev))
        self.save()
        self.lock.notify_all()


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = merge_patch(target.get(k), v)
    return target


def selector_terms(selector):
    """Splits at commas outside parentheses ("a=b,c in (x,y)")."""
    terms, cur, depth = [], "", 0
    for ch in selector or "":
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    return [t.strip() for t in terms + [cur] if t.strip()]


def selector_matches(selector, labels):
    for term in selector_terms(selector):
        if " in (" in term or " notin (" in term:
            k, rest = term.split(" ", 1)
            values = {v.strip() for v in rest.split("(", 1)[1].rstrip(")").split(",")}
            if (labels.get(k) in values) != rest.startswith("in"):
                return False
        elif "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k.strip()) == v.strip():
                return False
        elif "==" in term or "=" in term:
            k, v = term.split("==", 1) if "==" in term else term.split("=", 1)
            if labels.get(k.strip()) != v.strip():
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    store = None
    schema = {}  # the CRD's openAPIV3Schema (main)
    token_file = None
    requests = []

    def log_message(self, *args):
        pass

    def send_json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        if self.headers.get("Content-Type", "").startswith("application/vnd.kubernetes.protobuf"):
            raise ValueError("protobuf bodies are not understood here; send JSON")
        return json.loads(self.raw or b"{}")

    def authorized(self):
        if not self.token_file:
            return True
        with open(self.token_file) as f:
            token = f.read().strip()
        return self.headers.get("Authorization") == "Bearer " + token

    def route(self, method):
        n = int(self.headers.get("Content-Length") or 0)
        self.raw = self.rfile.read(n) if n else b""  # every body is read, DELETE's options too
        url = urlsplit(self.path)
        q = {k: v[-1] for k, v in parse_qs(url.query).items()}
        Handler.requests.append(f"{method} {self.path}")
        parts = [p for p in url.path.split("/") if p]
        if parts[:1] == ["fake"]:
            return self.control(method, parts[1:])
        if not self.authorized():
            return self.send_json(401, status(401, "Unauthorized", "Unauthorized"))
        if url.path == "/openapi/v3":
            return self.send_json(200, {"paths": {f"apis/{GROUP}/{VERSION}": {
                "serverRelativeURL": f"/openapi/v3/apis/{GROUP}/{VERSION}?hash=fakekube"}}})
        if url.path == f"/openapi/v3{API}":
            return self.send_json(200, openapi_group())
        if url.path == "/version":
            return self.send_json(200, {"major": "1", "minor": "32", "gitVersion": "v1.32.0-fakekube"})
        if url.path == "/api":
            return self.send_json(200, {"kind": "APIVersions", "versions": ["v1"],
                                        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]})
        if url.path == "/api/v1":
            return self.send_json(200, {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                {"name": "namespaces", "singularName": "namespace", "namespaced": False, "kind": "Namespace",
                 "verbs": ["get", "list"], "shortNames": ["ns"]},
                {"name": "secrets", "singularName": "secret", "namespaced": True, "kind": "Secret",
                 "verbs": ["create", "delete", "get", "list"]}]})
        if parts[:2] == ["api", "v1"] and len(parts) >= 5 and parts[2] == "namespaces" and parts[4] == "secrets":
            return self.secret(method, parts[3], parts[5] if len(parts) > 5 else None)
        if url.path == "/apis":
            gv = {"groupVersion": f"{GROUP}/{VERSION}", "version": VERSION}
            return self.send_json(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": GROUP, "versions": [gv], "preferredVersion": gv}]})
        if url.path == API:
            verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
            return self.send_json(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{GROUP}/{VERSION}",
                                        "resources": [
                {"name": PLURAL, "singularName": "dnsrecord", "namespaced": True, "kind": KIND, "verbs": verbs},
                {"name": PLURAL + "/status", "singularName": "", "namespaced": True, "kind": KIND,
                 "verbs": ["get", "patch", "update"]}]})
        # /apis/G/V/dnsrecords or /apis/G/V/namespaces/NS/dnsrecords[/NAME[/status]]
        if parts[:3] != ["apis", GROUP, VERSION]:
            return self.send_json(404, status(404, "NotFound", "the server could not find the requested resource"))
        rest = parts[3:]
        ns = None
        if rest[:1] == ["namespaces"] and len(rest) >= 3:
            ns, rest = rest[1], rest[2:]
        if rest[:1] != [PLURAL] or len(rest) > 3:
            return self.send_json(404, status(404, "NotFound", "the server could not find the requested resource"))
        name = rest[1] if len(rest) >= 2 else None
        sub = rest[2] if len(rest) == 3 else None
        if name is None:
            if method == "GET" and q.get("watch") in ("1", "true"):
                return self.watch(ns, q)
            if method == "GET":
                return self.list(ns, q)
            if method == "POST" and ns:
                return self.create(ns, self.body())
            return self.send_json(405, status(405, "MethodNotAllowed", method))
        if not ns:
            return self.send_json(404, status(404, "NotFound", "namespace required"))
        return self.one(method, ns, name, sub)

    def list(self, ns, q):
        limit = int(q.get("limit") or 0)
        start, rv = None, None
        if q.get("continue"):
            try:
                token = json.loads(base64.urlsafe_b64decode(q["continue"] + "=" * (-len(q["continue"]) % 4)))
                start, rv = tuple(token["after"]), token["rv"]
            except (ValueError, KeyError, TypeError):
                return self.send_json(400, status(400, "BadRequest", "bad continue token"))
        with self.store.lock:
            if rv is not None and rv < self.store.oldest:
                return self.send_json(410, status(410, "Expired", "the continue token has expired"))
            keys = [k for k, o in sorted(self.store.objects.items())
                    if (ns is None or k[0] == ns) and (start is None or k > start)
                    and selector_matches(q.get("labelSelector"), o["metadata"].get("labels", {}))]
            rv = rv or self.store.rv
            more = limit and len(keys) > limit
            keys = keys[:limit] if limit else keys
            items = [json.loads(json.dumps(self.store.objects[k])) for k in keys]
        meta = {"resourceVersion": str(rv)}
        if more:
            token = json.dumps({"after": list(keys[-1]), "rv": rv}).encode()
            meta["continue"] = base64.urlsafe_b64encode(token).decode().rstrip("=")  # as the API server's
        self.send_json(200, {"kind": KIND + "List", "apiVersion": f"{GROUP}/{VERSION}", "metadata": meta,
                             "items": items})

    def secret(self, method, ns, name):
        secrets = self.store.secrets
        with self.store.lock:
            if name is None and method == "POST":
                obj = self.body()
                obj.setdefault("metadata", {})["namespace"] = ns
                if "stringData" in obj:  # as the API server does: folded into data, base64
                    obj.setdefault("data", {}).update(
                        {k: base64.b64encode(v.encode()).decode() for k, v in obj.pop("stringData").items()})
                obj["apiVersion"], obj["kind"] = "v1", "Secret"
                secrets[(ns, obj["metadata"]["name"])] = obj
                return self.send_json(201, obj)
            if name is None and method == "GET":
                return self.send_json(200, {"kind": "SecretList", "apiVersion": "v1", "metadata": {},
                                            "items": [o for (n, _), o in sorted(secrets.items()) if n == ns]})
            if (ns, name) not in secrets:
                return self.send_json(404, status(404, "NotFound", f'secrets "{name}" not found'))
            if method == "GET":
                return self.send_json(200, secrets[(ns, name)])
            if method == "DELETE":
                return self.send_json(200, secrets.pop((ns, name)))
        self.send_json(405, status(405, "MethodNotAllowed", method))

    def invalid(self, obj):
        """Sends 422 and returns True when OBJ does not fit the CRD's schema, as the API server answers it."""
        errors = schema_errors({k: v for k, v in obj.items() if k != "status"}, self.schema, "")
        if not errors:
            return False
        name = (obj.get("metadata") or {}).get("name", "")
        fields = [f"{field}: {message}" for _, field, message in errors]
        listed = fields[0] if len(fields) == 1 else "[" + ", ".join(fields) + "]"
        causes = [{"reason": reason, "message": message, "field": field} for reason, field, message in errors]
        self.send_json(422, dict(status(422, "Invalid", f'{KIND}.{GROUP} "{name}" is invalid: {listed}'),
                                 details={"name": name, "group": GROUP, "kind": KIND, "causes": causes}))
        return True

    def create(self, ns, obj):
        meta = obj.setdefault("metadata", {})
        meta["namespace"] = ns
        if not meta.get("name"):
            return self.send_json(422, status(422, "Invalid", "metadata.name: Required value"))
        if self.invalid(obj):
            return
        with self.store.lock:
            if (ns, meta["name"]) in self.store.objects:
                return self.send_json(409, status(409, "AlreadyExists", f'dnsrecords.{GROUP} "{meta["name"]}" already exists'))
            meta.update({"uid": str(uuid.uuid4()), "generation": 1,
                         "creationTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
            obj["apiVersion"], obj["kind"] = f"{GROUP}/{VERSION}", KIND
            obj.pop("status", None)  # written through /status only
            self.store.objects[(ns, meta["name"])] = obj
            self.store.record("ADDED", obj)
            out = json.loads(json.dumps(obj))
        self.send_json(201, out)

    def one(self, method, ns, name, sub):
        key = (ns, name)
        with self.store.lock:
            cur = self.store.objects.get(key)
            if cur is None:
                return self.send_json(404, status(404, "NotFound", f'dnsrecords.{GROUP} "{name}" not found'))
            if method == "GET":
                return self.send_json(200, cur)
            if method == "DELETE":
                if cur["metadata"].get("finalizers"):
                    # As the API server does: an object with finalizers is only marked; it goes when the last
                    # finalizer is removed (below).
                    if not cur["metadata"].get("deletionTimestamp"):
                        new = json.loads(json.dumps(cur))
                        new["metadata"]["deletionTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                        new["metadata"]["deletionGracePeriodSeconds"] = 0
                        self.store.objects[key] = new
                        self.store.record("MODIFIED", new, json.loads(json.dumps(cur)))
                        cur = new
                    return self.send_json(200, cur)
                del self.store.objects[key]
                self.store.record("DELETED", cur, json.loads(json.dumps(cur)))
                return self.send_json(200, cur)
            if method in ("PATCH", "PUT"):
                body = self.body()
                if not isinstance(body, dict):
                    return self.send_json(415, status(415, "UnsupportedMediaType", "only merge patches are served"))
                want_rv = (body.get("metadata") or {}).get("resourceVersion")
                if want_rv and want_rv != cur["metadata"]["resourceVersion"]:  # a precondition, as the API server's
                    return self.send_json(409, status(409, "Conflict", f'Operation cannot be fulfilled on dnsrecords.{GROUP} "{name}": the object has been modified; please apply your changes to the latest version and try again'))
                if method == "PUT":
                    new = body if sub is None else dict(cur, status=body.get("status"))
                else:
                    new = merge_patch(json.loads(json.dumps(cur)), body)
                if sub is None and self.invalid(new):
                    return
                # The status subresource changes only status; the object's endpoint never changes status.
                if sub == "status":
                    new = dict(cur, status=new.get("status"))
                else:
                    new["status"] = cur.get("status")
                    if new.get("spec") != cur.get("spec"):
                        new["metadata"]["generation"] = cur["metadata"].get("generation", 1) + 1
                for k in ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp",
                          "deletionGracePeriodSeconds"):
                    if k in cur["metadata"]:
                        new["metadata"][k] = cur["metadata"][k]
                    else:
                        new["metadata"].pop(k, None)
                if new.get("status") is None:
                    new.pop("status", None)
                deleting = bool(cur["metadata"].get("deletionTimestamp"))
                if deleting and set(new["metadata"].get("finalizers") or []) - set(cur["metadata"].get("finalizers") or []):
                    return self.send_json(422, status(422, "Invalid", "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted"))
                if deleting and not new["metadata"].get("finalizers"):  # the last finalizer removed: it goes
                    del self.store.objects[key]
                    self.store.record("DELETED", new, json.loads(json.dumps(new)))
                    return self.send_json(200, new)
                self.store.objects[key] = new
                self.store.record("MODIFIED", new, json.loads(json.dumps(cur)))
                return self.send_json(200, new)
        self.send_json(405, status(405, "MethodNotAllowed", method))

    def watch(self, ns, q):
        selector = q.get("labelSelector")
        bookmarks = q.get("allowWatchBookmarks") in ("1", "true")
        deadline = time.time() + float(q.get("timeoutSeconds") or 1800)
        try:
            since = int(q.get("resourceVersion") or 0)
        except ValueError:
            return self.send_json(400, status(400, "BadRequest", "bad resourceVersion"))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(obj):
            data = (json.dumps(obj) + "\n").encode()
            # Split each event over two chunks: a client must read the stream, not the chunks.
            half = len(data) // 2
            for part in (data[:half], data[half:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.flush()

        def visible(o):
            return (ns is None or o["metadata"]["namespace"] == ns) and \
                selector_matches(selector, o["metadata"].get("labels", {}))

        with self.store.lock:
            if since == 0:  # "any": the current state as ADDED, then what follows
                pending = [(self.store.rv, "ADDED", o, None) for o in self.store.objects.values()]
                since = self.store.rv
            else:
                pending = []
            expired_at_start = self.store.expired
        last_bookmark = time.time()
        try:
            while time.time() < deadline:
                with self.store.lock:
                    if since < self.store.oldest or self.store.expired != expired_at_start:
                        chunk({"type": "ERROR", "object": status(410, "Expired", "too old resource version")})
                        break
                    pending += [e for e in self.store.events if e[0] > since]
                    if not pending:
                        self.store.lock.wait(timeout=0.2)
                        pending += [e for e in self.store.events if e[0] > since]
                for rv, kind, obj, prev in pending:
                    since = max(since, rv)
                    # As the API server's watch cache does (cacher.go, convertToWatchEvent): each event is
                    # judged by the object before and after it, never by what exists when the watch opened,
                    # so a watch from a list's resourceVersion sees a delete made between the two.
                    now_visible = kind != "DELETED" and visible(obj)
                    was_visible = prev is not None and visible(prev)
                    if now_visible:
                        chunk({"type": "MODIFIED" if was_visible else "ADDED", "object": obj})
                    elif was_visible:  # deleted, or no longer selected: the last state it was seen in
                        gone = json.loads(json.dumps(prev))
                        gone["metadata"]["resourceVersion"] = str(rv)
                        chunk({"type": "DELETED", "object": gone})
                pending = []
                if bookmarks and time.time() - last_bookmark > 1:
                    chunk({"type": "BOOKMARK", "object": {"kind": KIND, "apiVersion": f"{GROUP}/{VERSION}",
                                                          "metadata": {"resourceVersion": str(since)}}})
                    last_bookmark = time.time()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def control(self, method, parts):
        if parts == ["compact"] and method == "POST":
            with self.store.lock:
                self.store.events.clear()
                self.store.oldest = self.store.rv
            return self.send_json(200, {"compacted": self.store.rv})
        if parts == ["expire"] and method == "POST":
            with self.store.lock:
                self.store.expired += 1
                self.store.lock.notify_all()
            return self.send_json(200, {"expired": True})
        if parts == ["requests"] and method == "GET":
            data = "\n".join(Handler.requests).encode() + b"\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            return self.wfile.write(data)
        self.send_json(404, status(404, "NotFound", "no such control"))

    def handle_one(self, method):
        try:
            self.route(method)
        except ValueError as e:  # a body that is not JSON: refused, as an API server refuses what it cannot decode
            self.send_json(415, status(415, "UnsupportedMediaType", str(e)))

    def do_GET(self):
        self.route("GET")

    def do_POST(self):
        self.handle_one("POST")

    def do_PUT(self):
        self.handle_one("PUT")

    def do_PATCH(self):
        self.handle_one("PATCH")

    def do_DELETE(self):
        self.route("DELETE")


def main():
    args = sys.argv[1:]
    addr, port, ready = args[0], int(args[1]), args[2]
    opts = dict(zip(args[3::2], args[4::2]))
    Handler.store = Store(opts.get("--state"))
    Handler.schema = crd_schema()
    Handler.token_file = opts.get("--token-file")
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer((addr, port), Handler)
    if opts.get("--tls"):
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(opts["--tls"])
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    open(ready, "w").close()
    server.serve_forever()


if __name__ == "__main__":
    main()
