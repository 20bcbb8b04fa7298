//! Node: `TestPrintNodeStatus`, `TestPrintNodeRole`, `TestPrintNodeOSImage`,
//! `TestPrintNodeKernelVersion`, `TestPrintNodeContainerRuntimeVersion`,
//! `TestPrintNodeExternalIP`, `TestPrintNodeInternalIP`.

use serde_json::{Value, json};

use super::check;

fn node(name: &str, unschedulable: bool, conditions: Value) -> Value {
    json!({"metadata": {"name": name}, "spec": {"unschedulable": unschedulable},
           "status": {"conditions": conditions}})
}

#[test]
fn node_status() {
    let ready = |s: &str| json!([{"type": "Ready", "status": s}]);
    let cases = [
        (node("foo1", false, ready("True")), "Ready"),
        (
            node("foo2", true, ready("True")),
            "Ready,SchedulingDisabled",
        ),
        (
            node(
                "foo3",
                false,
                json!([{"type": "Ready", "status": "True"}, {"type": "Ready", "status": "True"}]),
            ),
            "Ready",
        ),
        (node("foo4", false, ready("False")), "NotReady"),
        (
            node("foo5", true, ready("False")),
            "NotReady,SchedulingDisabled",
        ),
        (
            node(
                "foo6",
                false,
                json!([{"type": "InvalidValue", "status": "True"}]),
            ),
            "Unknown",
        ),
        (node("foo7", false, json!([{}])), "Unknown"),
        (
            node(
                "foo8",
                true,
                json!([{"type": "InvalidValue", "status": "True"}]),
            ),
            "Unknown,SchedulingDisabled",
        ),
        (
            node("foo9", true, json!([{}])),
            "Unknown,SchedulingDisabled",
        ),
        // Upstream keys conditions by type: the last Ready condition wins.
        (
            node(
                "foo10",
                false,
                json!([{"type": "Ready", "status": "False"}, {"type": "Ready", "status": "True"}]),
            ),
            "Ready",
        ),
    ];
    for (n, status) in cases {
        let name = n["metadata"]["name"].clone();
        check(
            "",
            "Node",
            n,
            json!([name, status, "<none>", "<unknown>", ""]),
        );
    }
}

#[test]
fn node_roles_and_wide_columns() {
    let labelled = |labels: Value| json!({"metadata": {"name": "n", "labels": labels}});
    check(
        "",
        "Node",
        labelled(json!({})),
        json!(["n", "Unknown", "<none>"]),
    );
    check(
        "",
        "Node",
        labelled(
            json!({"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/control-plane": "",
                        "node-role.kubernetes.io/proxy": "", "kubernetes.io/role": "node"}),
        ),
        json!(["n", "Unknown", "control-plane,master,node,proxy"]),
    );
    check(
        "",
        "Node",
        labelled(json!({"kubernetes.io/role": "node"})),
        json!(["n", "Unknown", "node"]),
    );
    check(
        "",
        "Node",
        labelled(
            json!({"node-role.kubernetes.io/": "", "kubernetes.io/role": "", "node-role.kubernetes.io/worker": "x"}),
        ),
        json!(["n", "Unknown", "worker"]),
    );

    let wide = |info: Value, addresses: Value| json!({"metadata": {"name": "foo1"}, "status": {"nodeInfo": info, "addresses": addresses}});
    let external = json!([{"type": "ExternalIP", "address": "1.1.1.1"}]);
    check(
        "",
        "Node",
        wide(json!({"osImage": "fake-os-image"}), external.clone()),
        json!([
            "foo1",
            "Unknown",
            "<none>",
            "<unknown>",
            "",
            "<none>",
            "1.1.1.1",
            "fake-os-image",
            "<unknown>",
            "<unknown>"
        ]),
    );
    check(
        "",
        "Node",
        wide(
            json!({"kernelVersion": "fake-kernel-version"}),
            external.clone(),
        ),
        json!([
            "foo1",
            "Unknown",
            "<none>",
            "<unknown>",
            "",
            "<none>",
            "1.1.1.1",
            "<unknown>",
            "fake-kernel-version",
            "<unknown>"
        ]),
    );
    check(
        "",
        "Node",
        wide(
            json!({"containerRuntimeVersion": "foo://1.2.3", "kubeletVersion": "v1.33.1"}),
            external,
        ),
        json!([
            "foo1",
            "Unknown",
            "<none>",
            "<unknown>",
            "v1.33.1",
            "<none>",
            "1.1.1.1",
            "<unknown>",
            "<unknown>",
            "foo://1.2.3"
        ]),
    );
    check(
        "",
        "Node",
        wide(
            json!({}),
            json!([{"type": "ExternalIP", "address": "2.2.2.2"}, {"type": "InternalIP", "address": "3.3.3.3"},
                               {"type": "ExternalIP", "address": "4.4.4.4"}]),
        ),
        json!([
            "foo1",
            "Unknown",
            "<none>",
            "<unknown>",
            "",
            "3.3.3.3",
            "2.2.2.2"
        ]),
    );
    check(
        "",
        "Node",
        wide(
            json!({}),
            json!([{"type": "InternalIP", "address": "2.2.2.2"}, {"type": "ExternalIP", "address": "3.3.3.3"},
                               {"type": "InternalIP", "address": "4.4.4.4"}]),
        ),
        json!([
            "foo1",
            "Unknown",
            "<none>",
            "<unknown>",
            "",
            "2.2.2.2",
            "3.3.3.3"
        ]),
    );
}
