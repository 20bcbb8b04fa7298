"""The official Python `kubernetes` client's typed APIs against skein.

Usage: python3 typed.py <kubeconfig>

- delete_namespaced_service returns a V1Service and delete of a ServiceAccount a
  V1ServiceAccount (upstream's storages return the deleted object; the client
  decodes the body into the kind), while a ConfigMap delete returns V1Status;
- an autoscaling/v1 HorizontalPodAutoscaler written with AutoscalingV1Api is
  read back with AutoscalingV2Api (one stored resource, two versions);
- an events.k8s.io/v1 Event created with EventsV1Api is listed by CoreV1Api.
Prints `PASS` at the end; any failure raises (exit status 1).
"""

import sys

try:
    from kubernetes import client, config
except ImportError as e:
    sys.exit(f"cannot import the kubernetes package ({e}): run hack/test.sh")

NS = "py-typed"


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def main(kubeconfig):
    config.load_kube_config(config_file=kubeconfig)
    core = client.CoreV1Api()
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))

    svc = client.V1Service(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1ServiceSpec(ports=[client.V1ServicePort(port=80)]),
    )
    core.create_namespaced_service(NS, svc)
    gone = core.delete_namespaced_service("web", NS)
    expect(isinstance(gone, client.V1Service), f"delete service returned {type(gone)}: {gone}")
    expect(gone.metadata.name == "web", f"deleted service: {gone.metadata}")
    print("== delete service -> V1Service", flush=True)

    core.create_namespaced_service_account(NS, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="robot")))
    gone = core.delete_namespaced_service_account("robot", NS)
    expect(isinstance(gone, client.V1ServiceAccount), f"delete service account returned {type(gone)}")
    print("== delete service account -> V1ServiceAccount", flush=True)

    core.create_namespaced_config_map(NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c")))
    gone = core.delete_namespaced_config_map("c", NS)
    expect(isinstance(gone, client.V1Status) and gone.status == "Success", f"delete configmap returned {gone}")
    print("== delete configmap -> V1Status", flush=True)

    v1 = client.AutoscalingV1Api()
    v1.create_namespaced_horizontal_pod_autoscaler(
        NS,
        client.V1HorizontalPodAutoscaler(
            metadata=client.V1ObjectMeta(name="web"),
            spec=client.V1HorizontalPodAutoscalerSpec(
                scale_target_ref=client.V1CrossVersionObjectReference(api_version="apps/v1", kind="Deployment", name="web"),
                min_replicas=1,
                max_replicas=4,
                target_cpu_utilization_percentage=65,
            ),
        ),
    )
    v2 = client.AutoscalingV2Api().read_namespaced_horizontal_pod_autoscaler("web", NS)
    metric = v2.spec.metrics[0]
    expect(
        metric.type == "Resource" and metric.resource.name == "cpu" and metric.resource.target.average_utilization == 65,
        f"v2 view of a v1 HPA: {v2.spec}",
    )
    print("== autoscaling/v1 HPA read through autoscaling/v2", flush=True)

    # events.k8s.io/v1 requires eventTime (a core Event without one fails
    # this client's model, against kube-apiserver too), so write through it
    # and read through core/v1.
    import datetime

    client.EventsV1Api().create_namespaced_event(
        NS,
        client.EventsV1Event(
            metadata=client.V1ObjectMeta(name="ev"),
            event_time=datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc),
            reporting_controller="example.com/ctl",
            reporting_instance="ctl-1",
            action="Scale",
            reason="Scaled",
            type="Normal",
            note="scaled up",
            regarding=client.V1ObjectReference(kind="Deployment", name="web", namespace=NS),
        ),
    )
    listed = core.list_namespaced_event(NS).items
    expect([e.metadata.name for e in listed] == ["ev"], f"core/v1 list: {listed}")
    expect(
        listed[0].message == "scaled up" and listed[0].involved_object.name == "web"
        and listed[0].reporting_component == "example.com/ctl",
        f"core/v1 view: {listed[0]}",
    )
    print("== events.k8s.io/v1 Event listed through core/v1", flush=True)

    core.delete_namespace(NS)
    print("PASS", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
