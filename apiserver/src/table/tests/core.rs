//! Core-group kinds with simple rows: `TestPrintNamespace`,
//! `TestPrintSecret`, `TestPrintServiceAccount`, `TestPrintConfigMap`,
//! `TestPrintService*`, and Endpoints.

use serde_json::{Value, json};

use super::{check, just_now};

fn meta(name: &str) -> Value {
    json!({"name": name, "creationTimestamp": just_now()})
}

#[test]
fn namespace() {
    check(
        "",
        "Namespace",
        json!({"metadata": meta("namespace1"), "status": {"phase": "FooStatus"}}),
        json!(["namespace1", "FooStatus", "0s"]),
    );
    check(
        "",
        "Namespace",
        json!({"metadata": {"name": "namespace2"}}),
        json!(["namespace2", "", "<unknown>"]),
    );
}

#[test]
fn secret_service_account_config_map() {
    let token = "kubernetes.io/service-account-token";
    check(
        "",
        "Secret",
        json!({"metadata": meta("secret1"), "type": token, "data": {"token": "c2VjcmV0"}}),
        json!(["secret1", token, 1, "0s"]),
    );
    check(
        "",
        "Secret",
        json!({"metadata": meta("secret1"), "type": token}),
        json!(["secret1", token, 0, "0s"]),
    );
    check(
        "",
        "Secret",
        json!({"metadata": meta("s"), "type": "Opaque", "data": {"a": "", "b": ""}, "stringData": {"b": "x", "c": "y"}}),
        json!(["s", "Opaque", 3, "0s"]),
    );
    check(
        "",
        "ServiceAccount",
        json!({"metadata": meta("sa1"), "secrets": []}),
        json!(["sa1", 0, "0s"]),
    );
    check(
        "",
        "ServiceAccount",
        json!({"metadata": meta("sa1"), "secrets": [{"name": "Secret1"}, {"name": "Secret2"}]}),
        json!(["sa1", 2, "0s"]),
    );
    check(
        "",
        "ConfigMap",
        json!({"metadata": meta("configmap1")}),
        json!(["configmap1", 0, "0s"]),
    );
    check(
        "",
        "ConfigMap",
        json!({"metadata": meta("configmap2"), "data": {"foo": "bar"}}),
        json!(["configmap2", 1, "0s"]),
    );
    check(
        "",
        "ConfigMap",
        json!({"metadata": meta("configmap3"), "data": {"foo": "bar"}, "binaryData": {"bin": "YmluYXJ5"}}),
        json!(["configmap3", 2, "0s"]),
    );
}

#[test]
fn endpoints() {
    let ep = |subsets: Value| json!({"metadata": meta("ep"), "subsets": subsets});
    check(
        "",
        "Endpoints",
        json!({"metadata": meta("ep")}),
        json!(["ep", "<none>", "0s"]),
    );
    check(
        "",
        "Endpoints",
        ep(
            json!([{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}], "ports": [{"port": 80}, {"port": 443}]}]),
        ),
        json!([
            "ep",
            "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...",
            "0s"
        ]),
    );
    check(
        "",
        "Endpoints",
        ep(
            json!([{"addresses": [{"ip": "fd00::1"}], "ports": [{"port": 8080}]},
                  {"addresses": [{"ip": "10.0.0.9"}]}]),
        ),
        json!(["ep", "[fd00::1]:8080,10.0.0.9", "0s"]),
    );
    check(
        "",
        "Endpoints",
        ep(json!([{"notReadyAddresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}])),
        json!(["ep", "", "0s"]),
    );
}
fn service(name: &str, spec: Value, status: Value) -> Value {
    json!({"metadata": {"name": name}, "spec": spec, "status": status})
}

#[test]
fn services() {
    let tcp = |port: i64| json!({"protocol": "tcp", "port": port});
    let cases = [
        (
            service(
                "test1",
                json!({"type": "ClusterIP", "ports": [tcp(2233)], "clusterIPs": ["10.9.8.7"],
                                     "selector": {"foo": "bar"}}),
                json!({}),
            ),
            json!([
                "test1",
                "ClusterIP",
                "10.9.8.7",
                "<none>",
                "2233/tcp",
                "<unknown>",
                "foo=bar"
            ]),
        ),
        (
            service(
                "test2",
                json!({"type": "NodePort", "clusterIPs": ["10.9.8.7"],
                                     "ports": [{"protocol": "tcp", "port": 8888, "nodePort": 9999}]}),
                json!({}),
            ),
            json!([
                "test2",
                "NodePort",
                "10.9.8.7",
                "<none>",
                "8888:9999/tcp",
                "<unknown>",
                "<none>"
            ]),
        ),
        (
            service(
                "test3",
                json!({"type": "LoadBalancer", "ports": [tcp(8888)], "clusterIPs": ["10.9.8.7"]}),
                json!({}),
            ),
            json!([
                "test3",
                "LoadBalancer",
                "10.9.8.7",
                "<pending>",
                "8888/tcp",
                "<unknown>"
            ]),
        ),
        (
            service(
                "test4",
                json!({"type": "LoadBalancer", "ports": [tcp(8888)], "clusterIPs": ["10.9.8.7"],
                                     "externalIPs": ["80.11.12.10"]}),
                json!({}),
            ),
            json!([
                "test4",
                "LoadBalancer",
                "10.9.8.7",
                "80.11.12.10",
                "8888/tcp",
                "<unknown>"
            ]),
        ),
        (
            service(
                "test5",
                json!({"type": "LoadBalancer", "ports": [tcp(8888)], "clusterIPs": ["10.9.8.7"],
                                     "externalIPs": ["80.11.12.10"]}),
                json!({"loadBalancer": {"ingress": [{"ip": "3.4.5.6", "hostname": "test.cluster.com"}]}}),
            ),
            json!([
                "test5",
                "LoadBalancer",
                "10.9.8.7",
                "3.4.5.6,80.11.12.10",
                "8888/tcp",
                "<unknown>"
            ]),
        ),
        (
            service(
                "test6",
                json!({"type": "LoadBalancer", "ports": [tcp(8888)], "clusterIPs": ["10.9.8.7"],
                                     "externalIPs": ["80.11.12.10", "80.11.12.11"]}),
                json!({"loadBalancer": {"ingress": [{"ip": "2.3.4.5", "hostname": "test.cluster.local"},
                                                        {"ip": "3.4.5.6", "hostname": "test.cluster.com"}]}}),
            ),
            json!([
                "test6",
                "LoadBalancer",
                "10.9.8.7",
                "2.3.4.5,3.4.5.6,80.11.12.10,80.11.12.11",
                "8888/tcp",
                "<unknown>"
            ]),
        ),
        (
            service(
                "test7",
                json!({"type": "ExternalName", "externalName": "my.database.example.com"}),
                json!({}),
            ),
            json!([
                "test7",
                "ExternalName",
                "<none>",
                "my.database.example.com",
                "<none>",
                "<unknown>"
            ]),
        ),
        // TestPrintServiceLoadBalancer: the wide form never elides.
        (
            service(
                "service4",
                json!({"type": "LoadBalancer", "clusterIPs": ["1.5.6.7"], "selector": {"foo": "bar"},
                                        "ports": [{"port": 80, "protocol": "TCP"}, {"port": 8090, "protocol": "UDP"},
                                                  {"port": 8000, "protocol": "TCP"}]}),
                json!({"loadBalancer": {"ingress": [{"ip": "2.3.4.5"}, {"ip": "3.4.5.6"},
                                                        {"ip": "5.6.7.8", "hostname": "host5678"}]}}),
            ),
            json!([
                "service4",
                "LoadBalancer",
                "1.5.6.7",
                "2.3.4.5,3.4.5.6,5.6.7.8",
                "80/TCP,8090/UDP,8000/TCP",
                "<unknown>",
                "foo=bar"
            ]),
        ),
        (
            service(
                "service2",
                json!({"type": "LoadBalancer", "clusterIPs": ["1.3.4.5"],
                                        "ports": [{"port": 80, "protocol": "TCP"}, {"port": 8090, "protocol": "UDP"},
                                                  {"port": 8000, "protocol": "TCP"}, {"port": 7777, "protocol": "SCTP"}]}),
                json!({}),
            ),
            json!([
                "service2",
                "LoadBalancer",
                "1.3.4.5",
                "<pending>",
                "80/TCP,8090/UDP,8000/TCP,7777/SCTP",
                "<unknown>"
            ]),
        ),
        // Headless, clusterIP-only (pre-dual-stack) and unknown types.
        (
            service(
                "headless",
                json!({"type": "ClusterIP", "clusterIP": "None", "clusterIPs": ["None"]}),
                json!({}),
            ),
            json!(["headless", "ClusterIP", "None", "<none>", "<none>"]),
        ),
        (
            service(
                "legacy",
                json!({"type": "ClusterIP", "clusterIP": "10.0.0.1"}),
                json!({}),
            ),
            json!(["legacy", "ClusterIP", "10.0.0.1"]),
        ),
        (
            service("odd", json!({}), json!({})),
            json!(["odd", "", "<none>", "<unknown>", "<none>"]),
        ),
    ];
    for (svc, expected) in cases {
        check("", "Service", svc, expected);
    }
}
