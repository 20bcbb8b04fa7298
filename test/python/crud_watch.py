"""The official Python `kubernetes` client against skein.

Usage: python3 crud_watch.py <kubeconfig>

ConfigMap CRUD (create, read, replace, merge patch, JSON patch, delete),
then a watch that receives a BOOKMARK and resumes from its resourceVersion,
seeing every later change exactly once. Prints one line per step and `PASS`
at the end; any failure raises (exit status 1) with what differed.
"""

import sys
import time

try:
    import kubernetes
    from kubernetes import client, config, watch
    from kubernetes.client.rest import ApiException
except ImportError as e:  # the Rust test checks this first; be clear anyway
    sys.exit(f"cannot import the kubernetes package ({e}): run hack/test.sh")

NS = "py-e2e"
TIMEOUT = 30  # seconds for any one request


def step(what):
    print(f"== {what}", flush=True)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_api_error(fn, status, reason):
    try:
        fn()
    except ApiException as e:
        expect(e.status == status, f"expected {status} {reason}, got {e.status}: {e.body}")
        expect(f'"reason":"{reason}"' in (e.body or ""), f"expected reason {reason}: {e.body}")
        return e
    raise AssertionError(f"expected {status} {reason}, but the call succeeded")


def crud(v1, merge_v1):
    step("create namespace")
    ns = v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)),
                             _request_timeout=TIMEOUT)
    expect(ns.status.phase == "Active", f"namespace phase: {ns.status}")

    step("create configmap")
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-cm", labels={"app": "py"}),
                              data={"a": "1"})
    created = v1.create_namespaced_config_map(NS, body, _request_timeout=TIMEOUT)
    expect(created.metadata.name == "py-cm", f"name: {created.metadata}")
    expect(created.metadata.namespace == NS, f"namespace: {created.metadata}")
    expect(created.metadata.uid, "a uid")
    expect(created.metadata.creation_timestamp is not None, "a creationTimestamp")
    expect(created.data == {"a": "1"}, f"data: {created.data}")
    managers = [m.manager for m in created.metadata.managed_fields or []]
    expect(managers == ["OpenAPI-Generator"], f"managedFields managers: {managers}")
    expect_api_error(lambda: v1.create_namespaced_config_map(NS, body, _request_timeout=TIMEOUT),
                     409, "AlreadyExists")

    step("read configmap")
    read = v1.read_namespaced_config_map("py-cm", NS, _request_timeout=TIMEOUT)
    expect(read.metadata.uid == created.metadata.uid, "same uid")
    expect(read.metadata.resource_version == created.metadata.resource_version, "same rv")
    listed = v1.list_namespaced_config_map(NS, label_selector="app=py", _request_timeout=TIMEOUT)
    expect([c.metadata.name for c in listed.items] == ["py-cm"], f"list: {listed.items}")

    step("replace configmap")
    read.data["a"] = "2"
    replaced = v1.replace_namespaced_config_map("py-cm", NS, read, _request_timeout=TIMEOUT)
    expect(replaced.data == {"a": "2"}, f"data: {replaced.data}")
    expect(int(replaced.metadata.resource_version) > int(read.metadata.resource_version),
           "replace moves the resourceVersion")
    # The old resourceVersion is stale now.
    read.data["a"] = "stale"
    expect_api_error(lambda: v1.replace_namespaced_config_map("py-cm", NS, read,
                                                              _request_timeout=TIMEOUT),
                     409, "Conflict")

    step("patch configmap (merge)")
    patched = merge_v1.patch_namespaced_config_map("py-cm", NS, {"data": {"b": "3"}},
                                                   _request_timeout=TIMEOUT)
    expect(patched.data == {"a": "2", "b": "3"}, f"data: {patched.data}")

    step("patch configmap (json patch)")
    patched = v1.patch_namespaced_config_map(
        "py-cm", NS, [{"op": "replace", "path": "/data/b", "value": "4"}],
        _request_timeout=TIMEOUT)
    expect(patched.data == {"a": "2", "b": "4"}, f"data: {patched.data}")

    step("delete configmap")
    status = v1.delete_namespaced_config_map("py-cm", NS, _request_timeout=TIMEOUT)
    expect(status.status == "Success", f"delete status: {status}")
    expect_api_error(lambda: v1.read_namespaced_config_map("py-cm", NS, _request_timeout=TIMEOUT),
                     404, "NotFound")
    expect_api_error(lambda: v1.delete_namespaced_config_map("py-cm", NS,
                                                             _request_timeout=TIMEOUT),
                     404, "NotFound")


def make(v1, name, data):
    return v1.create_namespaced_config_map(
        NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data=data),
        _request_timeout=TIMEOUT)


def watch_bookmark_resume(v1):
    step("watch until a bookmark")
    start = make(v1, "w0", {"k": "0"})
    w1 = make(v1, "w1", {"k": "1"})
    w = watch.Watch()
    seen, bookmark = [], None
    began = time.monotonic()
    # timeout_seconds bounds the stream; the server sends a bookmark when
    # the watch has been idle for about 5 s.
    for event in w.stream(v1.list_namespaced_config_map, NS,
                          resource_version=start.metadata.resource_version,
                          allow_watch_bookmarks=True, timeout_seconds=20,
                          _request_timeout=TIMEOUT):
        if event["type"] == "BOOKMARK":
            bookmark = event["raw_object"]
            w.stop()
            break
        seen.append((event["type"], event["object"].metadata.name))
    expect(bookmark is not None,
           f"no BOOKMARK within {time.monotonic() - began:.1f}s; saw {seen}")
    print(f"   bookmark after {time.monotonic() - began:.1f}s: {bookmark}", flush=True)
    expect(seen == [("ADDED", "w1")], f"events before the bookmark: {seen}")
    expect(bookmark.get("kind") == "ConfigMap", f"bookmark kind: {bookmark}")
    bookmark_rv = bookmark["metadata"]["resourceVersion"]
    expect(int(bookmark_rv) >= int(w1.metadata.resource_version),
           f"bookmark rv {bookmark_rv} < w1's {w1.metadata.resource_version}")

    step("changes while no watch is open")
    w2 = make(v1, "w2", {"k": "2"})
    v1.replace_namespaced_config_map(
        "w2", NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(
            name="w2", resource_version=w2.metadata.resource_version), data={"k": "2b"}),
        _request_timeout=TIMEOUT)
    v1.delete_namespaced_config_map("w1", NS, _request_timeout=TIMEOUT)

    step(f"resume from the bookmark's resourceVersion {bookmark_rv}")
    w = watch.Watch()
    events = []
    for event in w.stream(v1.list_namespaced_config_map, NS, resource_version=bookmark_rv,
                          allow_watch_bookmarks=True, timeout_seconds=3,
                          _request_timeout=TIMEOUT):
        if event["type"] == "BOOKMARK":
            continue
        obj = event["object"]
        expect(int(obj.metadata.resource_version) > int(bookmark_rv),
               f"event at or before the bookmark: {event['raw_object']}")
        events.append((event["type"], obj.metadata.name, (obj.data or {}).get("k")))
    expected = [("ADDED", "w2", "2"), ("MODIFIED", "w2", "2b"), ("DELETED", "w1", "1")]
    expect(events == expected, f"after the bookmark: {events}, expected {expected}")


def main():
    kubeconfig = sys.argv[1]
    print(f"kubernetes {kubernetes.__version__}", flush=True)
    config.load_kube_config(config_file=kubeconfig)
    v1 = client.CoreV1Api()
    merge_client = client.ApiClient()
    # The generated client picks json-patch (or strategic merge for a dict);
    # a default header overrides it for a merge patch.
    merge_client.set_default_header("Content-Type", "application/merge-patch+json")
    merge_v1 = client.CoreV1Api(merge_client)
    crud(v1, merge_v1)
    watch_bookmark_resume(v1)
    print("PASS", flush=True)


if __name__ == "__main__":
    main()
