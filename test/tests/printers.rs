//! Table printers (issue 9, gap 9) against a real `skein serve`: one object
//! of every listable built-in kind, created over raw HTTPS, then
//! `kubectl get <resource> <name>` (and `-o wide` for a few kinds) with
//! kubectl 1.35 and 1.32. Each case asserts the header line — upstream
//! v1.33's column names (`printers.go`; kube-aggregator's APIService
//! convertor; the default `NAME  CREATED AT` for the kinds upstream prints
//! with it) — and cells derived from the object as kube-apiserver prints
//! them.
//!
//! Cells are located by the header's column offsets (kubectl's tabwriter
//! left-aligns every cell under its header), so empty cells and cells with
//! spaces (`pods: 1/10, services: 0/5`) are compared exactly. `AGE` cells
//! must look like ages and `CREATED AT` cells like RFC 3339 timestamps.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};
use skein_tests::cli::{self, Env, is_age};
use skein_tests::http::Api;

const NS: &str = "printers";

/// A PKCS#10 request (P-256, CN=printers-user, O=printers), base64 of its
/// PEM, as `spec.request` carries it.
const CSR_PEM_B64: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIbE1JR05BZ0VBTUNzeEZqQVVCZ05WQkFNTURYQnlhVzUwWlhKekxYVnpaWEl4RVRBUEJnTlZCQW9NQ0hCeQphVzUwWlhKek1Ga3dFd1lIS29aSXpqMENBUVlJS29aSXpqMERBUWNEUWdBRVN6emFncytBa3huZnVWejJ5UjNTCkNLVjdkV2Z6by9jTUwzbE0xaTFYY25PUzUraTZCUnNNdE9qYmpzdndVbUxRV210dmpIWldSN0lLZzdvOGFNS3UKREtBQU1Bb0dDQ3FHU000OUJBTUNBMGNBTUVRQ0lCbEhSV1QxUnNaakhSL2JabHZCQXYxQTdzd0NiazFqRzdudQpLS3d5SnFyZkFpQlM5ZVdBcFNpb1BoRStvRTYvd250Y000c2M1bm9MdWFBOGtJU29EQ1V6amc9PQotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K";

/// What a cell must hold.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// Exactly this text.
    Is(&'static str),
    /// An age (`0s`, `5m`).
    Age,
    /// An RFC 3339 UTC timestamp (`2026-01-02T03:04:05Z`).
    Timestamp,
    /// Anything (text the server computes, e.g. a health message).
    Any,
    /// The string at this path of the object as the server stored it.
    Field(&'static [&'static str]),
}
use Want::{Age, Any, Field, Is, Timestamp};

/// One kind: how to create its object and what `kubectl get` shows.
struct Case {
    /// The kubectl resource argument (group-qualified where ambiguous).
    resource: &'static str,
    /// The collection to POST to (`{ns}` is replaced by [`NS`]); empty for
    /// an object the server provides.
    collection: &'static str,
    object: Value,
    /// Every cell of the default view, by column (header text as printed).
    view: &'static [(&'static str, Want)],
    /// `-o wide`, when checked: every cell by column.
    wide: Option<&'static [(&'static str, Want)]>,
}

fn case(
    resource: &'static str,
    collection: &'static str,
    object: Value,
    view: &'static [(&'static str, Want)],
) -> Case {
    Case {
        resource,
        collection,
        object,
        view,
        wide: None,
    }
}

fn wide(mut c: Case, view: &'static [(&'static str, Want)]) -> Case {
    c.wide = Some(view);
    c
}

/// A pod template with one container `c` (`nginx:1.27`) labelled `app`.
fn template(app: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
    })
}

fn selector(app: &str) -> Value {
    json!({"matchLabels": {"app": app}})
}

/// Every case but ControllerRevision (which needs its owner's uid).
#[allow(clippy::too_many_lines)]
fn cases() -> Vec<Case> {
    vec![
        // --- core -------------------------------------------------------
        wide(
            case(
                "pods",
                "/api/v1/namespaces/{ns}/pods",
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod-1"},
                       "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}),
                &[
                    ("NAME", Is("pod-1")),
                    ("READY", Is("0/1")),
                    ("STATUS", Is("Pending")),
                    ("RESTARTS", Is("0")),
                    ("AGE", Age),
                ],
            ),
            &[
                ("NAME", Is("pod-1")),
                ("READY", Is("0/1")),
                ("STATUS", Is("Pending")),
                ("RESTARTS", Is("0")),
                ("AGE", Age),
                ("IP", Is("<none>")),
                ("NODE", Is("<none>")),
                ("NOMINATED NODE", Is("<none>")),
                ("READINESS GATES", Is("<none>")),
            ],
        ),
        case(
            "nodes",
            "/api/v1/nodes",
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "printers-node",
                   "labels": {"node-role.kubernetes.io/worker": ""}}}),
            &[
                ("NAME", Is("printers-node")),
                ("STATUS", Is("Unknown")),
                ("ROLES", Is("worker")),
                ("AGE", Age),
                ("VERSION", Is("")),
            ],
        ),
        case(
            "namespaces",
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "printers-extra"}}),
            &[
                ("NAME", Is("printers-extra")),
                ("STATUS", Is("Active")),
                ("AGE", Age),
            ],
        ),
        case(
            "configmaps",
            "/api/v1/namespaces/{ns}/configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-1"},
                   "data": {"a": "1"}, "binaryData": {"b": "AA=="}}),
            &[("NAME", Is("cm-1")), ("DATA", Is("2")), ("AGE", Age)],
        ),
        case(
            "endpoints",
            "/api/v1/namespaces/{ns}/endpoints",
            json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "ep-1"},
                   "subsets": [{"addresses": [{"ip": "10.1.0.1"}, {"ip": "10.1.0.2"}],
                                "ports": [{"name": "http", "port": 80, "protocol": "TCP"},
                                          {"name": "https", "port": 443, "protocol": "TCP"}]}]}),
            &[
                ("NAME", Is("ep-1")),
                (
                    "ENDPOINTS",
                    Is("10.1.0.1:80,10.1.0.2:80,10.1.0.1:443 + 1 more..."),
                ),
                ("AGE", Age),
            ],
        ),
        wide(
            case(
                "events",
                "/api/v1/namespaces/{ns}/events",
                json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev-1"},
                       "involvedObject": {"kind": "Pod", "name": "pod-1", "namespace": NS,
                                          "fieldPath": "spec.containers{c}"},
                       "reason": "Pulled", "message": "Image pulled", "type": "Normal",
                       "count": 3, "source": {"component": "kubelet", "host": "node-1"},
                       "firstTimestamp": "2020-01-01T00:00:00Z",
                       "lastTimestamp": "2020-01-01T00:00:00Z"}),
                &[
                    ("LAST SEEN", Age),
                    ("TYPE", Is("Normal")),
                    ("REASON", Is("Pulled")),
                    ("OBJECT", Is("pod/pod-1")),
                    ("MESSAGE", Is("Image pulled")),
                ],
            ),
            &[
                ("LAST SEEN", Age),
                ("TYPE", Is("Normal")),
                ("REASON", Is("Pulled")),
                ("OBJECT", Is("pod/pod-1")),
                ("SUBOBJECT", Is("spec.containers{c}")),
                ("SOURCE", Is("kubelet, node-1")),
                ("MESSAGE", Is("Image pulled")),
                ("FIRST SEEN", Age),
                ("COUNT", Is("3")),
                ("NAME", Is("ev-1")),
            ],
        ),
        case(
            "limitranges",
            "/api/v1/namespaces/{ns}/limitranges",
            json!({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr-1"},
                   "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}}]}}),
            &[("NAME", Is("lr-1")), ("CREATED AT", Timestamp)],
        ),
        wide(
            case(
                "persistentvolumes",
                "/api/v1/persistentvolumes",
                json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
                       "spec": {"capacity": {"storage": "1024Mi"}, "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
                                "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "slow",
                                "hostPath": {"path": "/tmp/pv-1"}}}),
                &[
                    ("NAME", Is("pv-1")),
                    ("CAPACITY", Is("1Gi")),
                    ("ACCESS MODES", Is("RWO,ROX")),
                    ("RECLAIM POLICY", Is("Retain")),
                    ("STATUS", Is("Pending")),
                    ("CLAIM", Is("")),
                    ("STORAGECLASS", Is("slow")),
                    ("VOLUMEATTRIBUTESCLASS", Is("<unset>")),
                    ("REASON", Is("")),
                    ("AGE", Age),
                ],
            ),
            &[
                ("NAME", Is("pv-1")),
                ("CAPACITY", Is("1Gi")),
                ("ACCESS MODES", Is("RWO,ROX")),
                ("RECLAIM POLICY", Is("Retain")),
                ("STATUS", Is("Pending")),
                ("CLAIM", Is("")),
                ("STORAGECLASS", Is("slow")),
                ("VOLUMEATTRIBUTESCLASS", Is("<unset>")),
                ("REASON", Is("")),
                ("AGE", Age),
                ("VOLUMEMODE", Is("Filesystem")),
            ],
        ),
        case(
            "persistentvolumeclaims",
            "/api/v1/namespaces/{ns}/persistentvolumeclaims",
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc-1"},
                   "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "slow",
                            "resources": {"requests": {"storage": "1Gi"}}}}),
            &[
                ("NAME", Is("pvc-1")),
                ("STATUS", Is("Pending")),
                ("VOLUME", Is("")),
                ("CAPACITY", Is("")),
                ("ACCESS MODES", Is("")),
                ("STORAGECLASS", Is("slow")),
                ("VOLUMEATTRIBUTESCLASS", Is("<unset>")),
                ("AGE", Age),
            ],
        ),
        case(
            "podtemplates",
            "/api/v1/namespaces/{ns}/podtemplates",
            json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "pt-1"},
                   "template": template("pt")}),
            &[
                ("NAME", Is("pt-1")),
                ("CONTAINERS", Is("c")),
                ("IMAGES", Is("nginx:1.27")),
                ("POD LABELS", Is("app=pt")),
            ],
        ),
        wide(
            case(
                "replicationcontrollers",
                "/api/v1/namespaces/{ns}/replicationcontrollers",
                json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc-1"},
                       "spec": {"replicas": 2, "selector": {"app": "rc"}, "template": template("rc")}}),
                &[
                    ("NAME", Is("rc-1")),
                    ("DESIRED", Is("2")),
                    ("CURRENT", Is("0")),
                    ("READY", Is("0")),
                    ("AGE", Age),
                ],
            ),
            &[
                ("NAME", Is("rc-1")),
                ("DESIRED", Is("2")),
                ("CURRENT", Is("0")),
                ("READY", Is("0")),
                ("AGE", Age),
                ("CONTAINERS", Is("c")),
                ("IMAGES", Is("nginx:1.27")),
                ("SELECTOR", Is("app=rc")),
            ],
        ),
        case(
            "resourcequotas",
            "/api/v1/namespaces/{ns}/resourcequotas",
            json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "rq-1"},
                   "spec": {"hard": {"pods": "10", "services": "5", "limits.cpu": "2"}}}),
            // REQUEST/LIMIT come from status, written below through the
            // status subresource as the quota controller would.
            &[
                ("NAME", Is("rq-1")),
                ("REQUEST", Is("pods: 1/10, services: 0/5")),
                ("LIMIT", Is("limits.cpu: 500m/2")),
                ("AGE", Age),
            ],
        ),
        case(
            "secrets",
            "/api/v1/namespaces/{ns}/secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "secret-1"},
                   "type": "Opaque", "data": {"k": "dg=="}}),
            &[
                ("NAME", Is("secret-1")),
                ("TYPE", Is("Opaque")),
                ("DATA", Is("1")),
                ("AGE", Age),
            ],
        ),
        case(
            "serviceaccounts",
            "/api/v1/namespaces/{ns}/serviceaccounts",
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa-1"}}),
            &[("NAME", Is("sa-1")), ("SECRETS", Is("0")), ("AGE", Age)],
        ),
        case(
            "services",
            "/api/v1/namespaces/{ns}/services",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc-1"},
                   "spec": {"clusterIP": "None", "selector": {"app": "web"},
                            "ports": [{"port": 80, "protocol": "TCP"}]}}),
            &[
                ("NAME", Is("svc-1")),
                ("TYPE", Is("ClusterIP")),
                ("CLUSTER-IP", Is("None")),
                ("EXTERNAL-IP", Is("<none>")),
                ("PORT(S)", Is("80/TCP")),
                ("AGE", Age),
            ],
        ),
        // --- apiregistration.k8s.io (kube-aggregator's convertor) --------
        case(
            "apiservices.apiregistration.k8s.io",
            "/apis/apiregistration.k8s.io/v1/apiservices",
            json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                   "metadata": {"name": "v1beta1.printers.example.com"},
                   "spec": {"group": "printers.example.com", "version": "v1beta1",
                            "service": {"namespace": NS, "name": "printers-api", "port": 443},
                            "groupPriorityMinimum": 1000, "versionPriority": 15,
                            "insecureSkipTLSVerify": true}}),
            &[
                ("NAME", Is("v1beta1.printers.example.com")),
                ("SERVICE", Is("printers/printers-api")),
                // The aggregator's availability check: no such Service.
                ("AVAILABLE", Is("False (ServiceNotFound)")),
                ("AGE", Age),
            ],
        ),
        // --- apps -------------------------------------------------------
        case(
            "daemonsets.apps",
            "/apis/apps/v1/namespaces/{ns}/daemonsets",
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds-1"},
                   "spec": {"selector": selector("ds"), "template": {
                       "metadata": {"labels": {"app": "ds"}},
                       "spec": {"nodeSelector": {"disk": "ssd"},
                                "containers": [{"name": "c", "image": "nginx:1.27"}]}}}}),
            &[
                ("NAME", Is("ds-1")),
                ("DESIRED", Is("0")),
                ("CURRENT", Is("0")),
                ("READY", Is("0")),
                ("UP-TO-DATE", Is("0")),
                ("AVAILABLE", Is("0")),
                ("NODE SELECTOR", Is("disk=ssd")),
                ("AGE", Age),
            ],
        ),
        case(
            "deployments.apps",
            "/apis/apps/v1/namespaces/{ns}/deployments",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "deploy-1"},
                   "spec": {"replicas": 2, "selector": selector("deploy"), "template": template("deploy")}}),
            &[
                ("NAME", Is("deploy-1")),
                ("READY", Is("0/2")),
                ("UP-TO-DATE", Is("0")),
                ("AVAILABLE", Is("0")),
                ("AGE", Age),
            ],
        ),
        case(
            "replicasets.apps",
            "/apis/apps/v1/namespaces/{ns}/replicasets",
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs-1"},
                   "spec": {"replicas": 3, "selector": selector("rs"), "template": template("rs")}}),
            &[
                ("NAME", Is("rs-1")),
                ("DESIRED", Is("3")),
                ("CURRENT", Is("0")),
                ("READY", Is("0")),
                ("AGE", Age),
            ],
        ),
        // --- events.k8s.io ----------------------------------------------
        case(
            "events.events.k8s.io",
            "/apis/events.k8s.io/v1/namespaces/{ns}/events",
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "ev-2"},
                   "eventTime": "2020-01-01T00:00:00.000000Z", "reportingController": "printers/ctl",
                   "reportingInstance": "ctl-1", "action": "Create", "reason": "Created",
                   "regarding": {"kind": "Deployment", "name": "deploy-1", "namespace": NS},
                   "note": "made it", "type": "Warning"}),
            &[
                ("LAST SEEN", Age),
                ("TYPE", Is("Warning")),
                ("REASON", Is("Created")),
                ("OBJECT", Is("deployment/deploy-1")),
                ("MESSAGE", Is("made it")),
            ],
        ),
        // --- autoscaling, batch ------------------------------------------
        case(
            "horizontalpodautoscalers.autoscaling",
            "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers",
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                   "metadata": {"name": "hpa-1"},
                   "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "deploy-1"},
                            "minReplicas": 1, "maxReplicas": 5,
                            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": 80}}}]}}),
            &[
                ("NAME", Is("hpa-1")),
                ("REFERENCE", Is("Deployment/deploy-1")),
                ("TARGETS", Is("cpu: <unknown>/80%")),
                ("MINPODS", Is("1")),
                ("MAXPODS", Is("5")),
                ("REPLICAS", Is("0")),
                ("AGE", Age),
            ],
        ),
        case(
            "cronjobs.batch",
            "/apis/batch/v1/namespaces/{ns}/cronjobs",
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj-1"},
                   "spec": {"schedule": "*/5 * * * *", "timeZone": "Etc/UTC", "jobTemplate": {"spec": {
                       "template": {"spec": {"restartPolicy": "Never",
                           "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}}),
            &[
                ("NAME", Is("cj-1")),
                ("SCHEDULE", Is("*/5 * * * *")),
                ("TIMEZONE", Is("Etc/UTC")),
                ("SUSPEND", Is("False")),
                ("ACTIVE", Is("0")),
                ("LAST SCHEDULE", Is("<none>")),
                ("AGE", Age),
            ],
        ),
        case(
            "jobs.batch",
            "/apis/batch/v1/namespaces/{ns}/jobs",
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job-1"},
                   "spec": {"completions": 2, "template": {"spec": {"restartPolicy": "Never",
                       "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}),
            &[
                ("NAME", Is("job-1")),
                ("STATUS", Is("Running")),
                ("COMPLETIONS", Is("0/2")),
                ("DURATION", Is("")),
                ("AGE", Age),
            ],
        ),
        // --- certificates.k8s.io -----------------------------------------
        case(
            "certificatesigningrequests.certificates.k8s.io",
            "/apis/certificates.k8s.io/v1/certificatesigningrequests",
            json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                   "metadata": {"name": "csr-1"},
                   "spec": {"request": CSR_PEM_B64, "signerName": "kubernetes.io/kube-apiserver-client",
                            "usages": ["client auth"], "expirationSeconds": 3600}}),
            &[
                ("NAME", Is("csr-1")),
                ("AGE", Age),
                ("SIGNERNAME", Is("kubernetes.io/kube-apiserver-client")),
                // spec.username as stored: kube-apiserver fills it from
                // the requesting user (`admin` here); see the report.
                ("REQUESTOR", Field(&["spec", "username"])),
                ("REQUESTEDDURATION", Is("60m")),
                ("CONDITION", Is("Pending")),
            ],
        ),
        // --- networking.k8s.io -------------------------------------------
        case(
            "ingressclasses.networking.k8s.io",
            "/apis/networking.k8s.io/v1/ingressclasses",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
                   "metadata": {"name": "printers-ic"},
                   "spec": {"controller": "example.com/ingress",
                            "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters",
                                           "name": "external-lb"}}}),
            &[
                ("NAME", Is("printers-ic")),
                ("CONTROLLER", Is("example.com/ingress")),
                (
                    "PARAMETERS",
                    Is("IngressParameters.k8s.example.com/external-lb"),
                ),
                ("AGE", Age),
            ],
        ),
        case(
            "ingresses.networking.k8s.io",
            "/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "ing-1"},
                   "spec": {"ingressClassName": "printers-ic", "rules": [{"host": "a.example.com"}],
                            "tls": [{"hosts": ["a.example.com"]}]}}),
            &[
                ("NAME", Is("ing-1")),
                ("CLASS", Is("printers-ic")),
                ("HOSTS", Is("a.example.com")),
                ("ADDRESS", Is("")),
                ("PORTS", Is("80, 443")),
                ("AGE", Age),
            ],
        ),
        case(
            "networkpolicies.networking.k8s.io",
            "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "np-1"},
                   "spec": {"podSelector": {"matchLabels": {"role": "db"},
                            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]},
                            "policyTypes": ["Ingress"]}}),
            &[
                ("NAME", Is("np-1")),
                ("POD-SELECTOR", Is("role=db,tier in (a,b)")),
                ("AGE", Age),
            ],
        ),
        case(
            "servicecidrs.networking.k8s.io",
            "/apis/networking.k8s.io/v1/servicecidrs",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
                   "metadata": {"name": "printers-cidr"}, "spec": {"cidrs": ["10.250.0.0/24"]}}),
            &[
                ("NAME", Is("printers-cidr")),
                ("CIDRS", Is("10.250.0.0/24")),
                ("AGE", Age),
            ],
        ),
        case(
            "ipaddresses.networking.k8s.io",
            "/apis/networking.k8s.io/v1/ipaddresses",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
                   "metadata": {"name": "10.250.0.7"},
                   "spec": {"parentRef": {"group": "", "resource": "services",
                                          "namespace": NS, "name": "svc-1"}}}),
            &[
                ("NAME", Is("10.250.0.7")),
                ("PARENTREF", Is("services/printers/svc-1")),
            ],
        ),
        // --- policy, rbac ------------------------------------------------
        case(
            "poddisruptionbudgets.policy",
            "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb-1"},
                   "spec": {"minAvailable": "50%", "selector": selector("web")}}),
            &[
                ("NAME", Is("pdb-1")),
                ("MIN AVAILABLE", Is("50%")),
                ("MAX UNAVAILABLE", Is("N/A")),
                ("ALLOWED DISRUPTIONS", Is("0")),
                ("AGE", Age),
            ],
        ),
        case(
            "clusterrolebindings.rbac.authorization.k8s.io",
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": "printers-crb"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "printers-cr"},
                   "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}]}),
            &[
                ("NAME", Is("printers-crb")),
                ("ROLE", Is("ClusterRole/printers-cr")),
                ("AGE", Age),
            ],
        ),
        case(
            "clusterroles.rbac.authorization.k8s.io",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                   "metadata": {"name": "printers-cr"},
                   "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}),
            &[("NAME", Is("printers-cr")), ("CREATED AT", Timestamp)],
        ),
        wide(
            case(
                "rolebindings.rbac.authorization.k8s.io",
                "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                       "metadata": {"name": "rb-1"},
                       "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "role-1"},
                       "subjects": [{"kind": "ServiceAccount", "name": "sa-1", "namespace": NS},
                                    {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "devs"}]}),
                &[
                    ("NAME", Is("rb-1")),
                    ("ROLE", Is("Role/role-1")),
                    ("AGE", Age),
                ],
            ),
            &[
                ("NAME", Is("rb-1")),
                ("ROLE", Is("Role/role-1")),
                ("AGE", Age),
                ("USERS", Is("")),
                ("GROUPS", Is("devs")),
                ("SERVICEACCOUNTS", Is("printers/sa-1")),
            ],
        ),
        case(
            "roles.rbac.authorization.k8s.io",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "role-1"},
                   "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]}),
            &[("NAME", Is("role-1")), ("CREATED AT", Timestamp)],
        ),
        // --- storage.k8s.io ----------------------------------------------
        case(
            "csidrivers.storage.k8s.io",
            "/apis/storage.k8s.io/v1/csidrivers",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                   "metadata": {"name": "csi.printers.example.com"},
                   "spec": {"attachRequired": false, "podInfoOnMount": true,
                            "tokenRequests": [{"audience": "vault"}],
                            "volumeLifecycleModes": ["Persistent", "Ephemeral"]}}),
            &[
                ("NAME", Is("csi.printers.example.com")),
                ("ATTACHREQUIRED", Is("false")),
                ("PODINFOONMOUNT", Is("true")),
                ("STORAGECAPACITY", Is("false")),
                ("TOKENREQUESTS", Is("vault")),
                ("REQUIRESREPUBLISH", Is("false")),
                ("MODES", Is("Persistent,Ephemeral")),
                ("AGE", Age),
            ],
        ),
        case(
            "csinodes.storage.k8s.io",
            "/apis/storage.k8s.io/v1/csinodes",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "printers-node"},
                   "spec": {"drivers": [{"name": "csi.printers.example.com", "nodeID": "node-1"}]}}),
            &[
                ("NAME", Is("printers-node")),
                ("DRIVERS", Is("1")),
                ("AGE", Age),
            ],
        ),
        case(
            "csistoragecapacities.storage.k8s.io",
            "/apis/storage.k8s.io/v1/namespaces/{ns}/csistoragecapacities",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
                   "metadata": {"name": "cap-1"}, "storageClassName": "fast", "capacity": "10240Mi"}),
            &[
                ("NAME", Is("cap-1")),
                ("STORAGECLASSNAME", Is("fast")),
                ("CAPACITY", Is("10Gi")),
            ],
        ),
        case(
            "storageclasses.storage.k8s.io",
            "/apis/storage.k8s.io/v1/storageclasses",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                   "metadata": {"name": "fast", "annotations":
                       {"storageclass.kubernetes.io/is-default-class": "true"}},
                   "provisioner": "csi.printers.example.com", "reclaimPolicy": "Retain",
                   "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true}),
            &[
                ("NAME", Is("fast (default)")),
                ("PROVISIONER", Is("csi.printers.example.com")),
                ("RECLAIMPOLICY", Is("Retain")),
                ("VOLUMEBINDINGMODE", Is("WaitForFirstConsumer")),
                ("ALLOWVOLUMEEXPANSION", Is("true")),
                ("AGE", Age),
            ],
        ),
        case(
            "volumeattachments.storage.k8s.io",
            "/apis/storage.k8s.io/v1/volumeattachments",
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va-1"},
                   "spec": {"attacher": "csi.printers.example.com", "nodeName": "printers-node",
                            "source": {"persistentVolumeName": "pv-1"}}}),
            &[
                ("NAME", Is("va-1")),
                ("ATTACHER", Is("csi.printers.example.com")),
                ("PV", Is("pv-1")),
                ("NODE", Is("printers-node")),
                ("ATTACHED", Is("false")),
                ("AGE", Age),
            ],
        ),
        // --- admissionregistration.k8s.io ----------------------------------
        case(
            "mutatingwebhookconfigurations.admissionregistration.k8s.io",
            "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
                   "metadata": {"name": "printers-mwc"}, "webhooks": [webhook("m")]}),
            &[
                ("NAME", Is("printers-mwc")),
                ("WEBHOOKS", Is("1")),
                ("AGE", Age),
            ],
        ),
        case(
            "validatingwebhookconfigurations.admissionregistration.k8s.io",
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                   "metadata": {"name": "printers-vwc"}, "webhooks": [webhook("v1"), webhook("v2")]}),
            &[
                ("NAME", Is("printers-vwc")),
                ("WEBHOOKS", Is("2")),
                ("AGE", Age),
            ],
        ),
        case(
            "validatingadmissionpolicies.admissionregistration.k8s.io",
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                   "metadata": {"name": "printers-vap"},
                   "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                            "matchConstraints": {"resourceRules": [{"apiGroups": ["printers.example.com"],
                                "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["widgets"]}]},
                            "validations": [{"expression": "true"}]}}),
            &[
                ("NAME", Is("printers-vap")),
                ("VALIDATIONS", Is("1")),
                ("PARAMKIND", Is("v1/ConfigMap")),
                ("AGE", Age),
            ],
        ),
        case(
            "validatingadmissionpolicybindings.admissionregistration.k8s.io",
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
            json!({"apiVersion": "admissionregistration.k8s.io/v1",
                   "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "printers-vapb"},
                   "spec": {"policyName": "printers-vap", "validationActions": ["Deny"],
                            "paramRef": {"name": "cm-1", "namespace": NS,
                                         "parameterNotFoundAction": "Deny"}}}),
            &[
                ("NAME", Is("printers-vapb")),
                ("POLICYNAME", Is("printers-vap")),
                ("PARAMREF", Is("printers/cm-1")),
                ("AGE", Age),
            ],
        ),
        // --- apiextensions.k8s.io (default convertor) -----------------------
        case(
            "customresourcedefinitions.apiextensions.k8s.io",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                   "metadata": {"name": "widgets.printers.example.com"},
                   "spec": {"group": "printers.example.com", "scope": "Namespaced",
                            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                      "listKind": "WidgetList"},
                            "versions": [{"name": "v1", "served": true, "storage": true,
                                          "schema": {"openAPIV3Schema": {"type": "object"}}}]}}),
            &[
                ("NAME", Is("widgets.printers.example.com")),
                ("CREATED AT", Timestamp),
            ],
        ),
        // --- scheduling, coordination, node, flowcontrol, discovery --------
        wide(
            case(
                "priorityclasses.scheduling.k8s.io",
                "/apis/scheduling.k8s.io/v1/priorityclasses",
                json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                       "metadata": {"name": "printers-high"}, "value": 100000,
                       "preemptionPolicy": "Never", "description": "printers"}),
                &[
                    ("NAME", Is("printers-high")),
                    ("VALUE", Is("100000")),
                    ("GLOBAL-DEFAULT", Is("false")),
                    ("AGE", Age),
                    ("PREEMPTIONPOLICY", Is("Never")),
                ],
            ),
            &[
                ("NAME", Is("printers-high")),
                ("VALUE", Is("100000")),
                ("GLOBAL-DEFAULT", Is("false")),
                ("AGE", Age),
                ("PREEMPTIONPOLICY", Is("Never")),
            ],
        ),
        case(
            "leases.coordination.k8s.io",
            "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "lease-1"},
                   "spec": {"holderIdentity": "holder-1", "leaseDurationSeconds": 15}}),
            &[
                ("NAME", Is("lease-1")),
                ("HOLDER", Is("holder-1")),
                ("AGE", Age),
            ],
        ),
        case(
            "runtimeclasses.node.k8s.io",
            "/apis/node.k8s.io/v1/runtimeclasses",
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                   "metadata": {"name": "printers-gvisor"}, "handler": "runsc"}),
            &[
                ("NAME", Is("printers-gvisor")),
                ("HANDLER", Is("runsc")),
                ("AGE", Age),
            ],
        ),
        case(
            "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io",
            "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
            json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
                   "metadata": {"name": "printers-plc"},
                   "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 5,
                       "limitResponse": {"type": "Queue", "queuing":
                           {"queues": 16, "handSize": 4, "queueLengthLimit": 20}}}}}),
            &[
                ("NAME", Is("printers-plc")),
                ("TYPE", Is("Limited")),
                ("NOMINALCONCURRENCYSHARES", Is("5")),
                ("QUEUES", Is("16")),
                ("HANDSIZE", Is("4")),
                ("QUEUELENGTHLIMIT", Is("20")),
                ("AGE", Age),
            ],
        ),
        case(
            "flowschemas.flowcontrol.apiserver.k8s.io",
            "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
            json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
                   "metadata": {"name": "printers-fs"},
                   "spec": {"priorityLevelConfiguration": {"name": "printers-plc"},
                            "matchingPrecedence": 2000, "distinguisherMethod": {"type": "ByUser"},
                            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "system:authenticated"}}],
                                       "resourceRules": [{"verbs": ["get"], "apiGroups": ["printers.example.com"],
                                                          "resources": ["widgets"], "namespaces": ["*"]}]}]}}),
            &[
                ("NAME", Is("printers-fs")),
                ("PRIORITYLEVEL", Is("printers-plc")),
                ("MATCHINGPRECEDENCE", Is("2000")),
                ("DISTINGUISHERMETHOD", Is("ByUser")),
                ("AGE", Age),
                ("MISSINGPL", Is("?")),
            ],
        ),
        case(
            "endpointslices.discovery.k8s.io",
            "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "slice-1"},
                   "addressType": "IPv4",
                   "ports": [{"name": "http", "port": 80, "protocol": "TCP"}, {"name": "metrics", "port": 9090}],
                   "endpoints": [{"addresses": ["10.1.0.1"]}, {"addresses": ["10.1.0.2"]},
                                 {"addresses": ["10.1.0.3"]}, {"addresses": ["10.1.0.4"]}]}),
            &[
                ("NAME", Is("slice-1")),
                ("ADDRESSTYPE", Is("IPv4")),
                ("PORTS", Is("80,9090")),
                ("ENDPOINTS", Is("10.1.0.1,10.1.0.2,10.1.0.3 + 1 more...")),
                ("AGE", Age),
            ],
        ),
    ]
}

/// A webhook that only matches a resource nothing creates.
fn webhook(name: &str) -> Value {
    json!({
        "name": format!("{name}.printers.example.com"),
        "clientConfig": {"url": "https://printers.example.com/hook"},
        "rules": [{"apiGroups": ["printers.example.com"], "apiVersions": ["v1"],
                   "operations": ["CREATE"], "resources": ["widgets"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

/// The StatefulSet and its ControllerRevision (owned by it, so the garbage
/// collector keeps it).
fn stateful_set() -> Case {
    case(
        "statefulsets.apps",
        "/apis/apps/v1/namespaces/{ns}/statefulsets",
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
               "spec": {"replicas": 2, "serviceName": "svc-1", "selector": selector("sts"),
                        "template": template("sts")}}),
        &[("NAME", Is("web")), ("READY", Is("0/2")), ("AGE", Age)],
    )
}

fn controller_revision(owner_uid: &str) -> Case {
    case(
        "controllerrevisions.apps",
        "/apis/apps/v1/namespaces/{ns}/controllerrevisions",
        json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
               "metadata": {"name": "web-6b8d4f", "ownerReferences": [{"apiVersion": "apps/v1",
                   "kind": "StatefulSet", "name": "web", "uid": owner_uid, "controller": true,
                   "blockOwnerDeletion": true}]},
               "data": {"spec": {}}, "revision": 3}),
        &[
            ("NAME", Is("web-6b8d4f")),
            ("CONTROLLER", Is("statefulset.apps/web")),
            ("REVISION", Is("3")),
            ("AGE", Age),
        ],
    )
}

/// `kubectl get componentstatuses etcd-0`: served, never created.
fn component_status() -> Case {
    case(
        "componentstatuses",
        "",
        json!({"apiVersion": "v1", "kind": "ComponentStatus", "metadata": {"name": "etcd-0"}}),
        &[
            ("NAME", Is("etcd-0")),
            ("STATUS", Is("Healthy")),
            ("MESSAGE", Any),
            ("ERROR", Any),
        ],
    )
}

/// POSTs `c`'s object; returns the created object.
async fn create(api: &Api, c: &Case) -> Value {
    if c.collection.is_empty() {
        return c.object.clone();
    }
    let path = c.collection.replace("{ns}", NS);
    let reply = api.post(&path, &c.object).await;
    assert_eq!(
        reply.status.as_u16(),
        201,
        "POST {path} {}: {}",
        c.object,
        reply.text()
    );
    reply.json()
}

/// The cells of the (only) data row of `table`, by the header's columns
/// `names` (each must start where the header says; a missing trailing cell
/// reads as "").
fn row_cells(table: &str, names: &[&str], what: &str) -> Vec<String> {
    let lines: Vec<&str> = table.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        2,
        "{what}: expected a header and one row:\n{table}"
    );
    let (head, row) = (lines[0], lines[1]);
    // Column offsets; between two names only spaces, nothing after the last.
    let mut starts = Vec::new();
    let mut at = 0;
    for name in names {
        let rest = &head[at..];
        let found = rest
            .find(name)
            .unwrap_or_else(|| panic!("{what}: no column {name:?} in header {head:?}"));
        assert!(
            rest[..found].trim().is_empty(),
            "{what}: unexpected text before {name:?} in header {head:?}"
        );
        starts.push(at + found);
        at += found + name.len();
    }
    assert!(
        head[at..].trim().is_empty(),
        "{what}: header {head:?} has columns after {names:?}"
    );
    (0..names.len())
        .map(|i| {
            let end = starts.get(i + 1).copied().unwrap_or(row.len());
            row.get(starts[i].min(row.len())..end.min(row.len()))
                .unwrap_or("")
                .trim()
                .to_owned()
        })
        .collect()
}

fn is_timestamp(cell: &str) -> bool {
    let b = cell.as_bytes();
    cell.len() == 20
        && cell.ends_with('Z')
        && b[4] == b'-'
        && b[10] == b'T'
        && cell[..4].chars().all(|c| c.is_ascii_digit())
}

/// Runs `kubectl get <resource> <name> [extra]` and checks every cell.
fn check_view(
    env: &Env,
    k: &Path,
    c: &Case,
    stored: &Value,
    view: &[(&str, Want)],
    extra: &[&str],
) {
    let name = stored["metadata"]["name"].as_str().expect("name");
    let mut args = vec!["get", c.resource, name, "-n", NS];
    args.extend_from_slice(extra);
    let out = cli::ok(k, &env.server, &args);
    let what = format!("kubectl {}", args.join(" "));
    let names: Vec<&str> = view.iter().map(|(n, _)| *n).collect();
    let got = row_cells(&out, &names, &what);
    for ((column, want), cell) in view.iter().zip(&got) {
        let good = match want {
            Is(text) => cell == text,
            Age => is_age(cell),
            Timestamp => is_timestamp(cell),
            Any => true,
            Field(path) => {
                let stored = path
                    .iter()
                    .fold(stored, |v, key| &v[*key])
                    .as_str()
                    .unwrap_or("");
                cell == stored
            }
        };
        assert!(
            good,
            "{what}: column {column} is {cell:?}, want {want:?}\n{out}"
        );
    }
}

#[tokio::test]
async fn kubectl_get_prints_upstream_columns_for_every_kind() {
    let env = cli::start().await;
    let api = Api::new(&env.server);
    let ns = cli::namespace(NS);
    let reply = api.post("/api/v1/namespaces", &ns).await;
    assert_eq!(reply.status.as_u16(), 201, "{}", reply.text());

    let mut all = cases();
    let mut stored = Vec::new();
    for c in &all {
        stored.push(create(&api, c).await);
    }
    // The quota controller's part: status.hard and status.used.
    let status = json!({"status": {
        "hard": {"pods": "10", "services": "5", "limits.cpu": "2"},
        "used": {"pods": "1", "limits.cpu": "500m"},
    }});
    let reply = api
        .merge_patch(
            &format!("/api/v1/namespaces/{NS}/resourcequotas/rq-1/status"),
            &status,
        )
        .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.text());
    let sts = stateful_set();
    let created = create(&api, &sts).await;
    let uid = created["metadata"]["uid"].as_str().expect("uid").to_owned();
    stored.push(created);
    all.push(sts);
    let revision = controller_revision(&uid);
    stored.push(create(&api, &revision).await);
    all.push(revision);
    if listable_kinds(&api)
        .await
        .contains(&(String::new(), "ComponentStatus".to_owned()))
    {
        let cs = component_status();
        stored.push(create(&api, &cs).await);
        all.push(cs);
    }

    // Every listable kind the server serves has a case (the table above is
    // complete, not a sample).
    let covered: BTreeSet<(String, String)> = all.iter().map(group_kind).collect();
    let served = listable_kinds(&api).await;
    let missing: Vec<_> = served.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "listable kinds without a case: {missing:?}"
    );

    // FlowSchema lists come sorted by matching precedence, then name, as
    // upstream's list printer sorts them (not in storage order).
    for (name, precedence) in [("printers-fs-b", 3000), ("printers-fs-a", 1500)] {
        let mut fs = all
            .iter()
            .find(|c| c.object["kind"] == "FlowSchema")
            .expect("FlowSchema case")
            .object
            .clone();
        fs["metadata"]["name"] = json!(name);
        fs["spec"]["matchingPrecedence"] = json!(precedence);
        let reply = api
            .post("/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", &fs)
            .await;
        assert_eq!(reply.status.as_u16(), 201, "{}", reply.text());
    }

    table_json(&api).await;

    for (_, k) in env.each() {
        let out = cli::ok(k, &env.server, &["get", "flowschemas"]);
        let ours: Vec<&str> = cli::column(&out, 0)
            .into_iter()
            .filter(|n| n.starts_with("printers-fs"))
            .collect();
        assert_eq!(
            ours,
            ["printers-fs-a", "printers-fs", "printers-fs-b"],
            "{out}"
        );
        for (c, obj) in all.iter().zip(&stored) {
            check_view(&env, k, c, obj, c.view, &[]);
            if let Some(view) = c.wide {
                check_view(&env, k, c, obj, view, &["-o", "wide"]);
            }
        }
    }
}

/// The Table JSON itself over raw HTTPS, where kubectl hides details:
/// JSON cell types (PriorityClass's integer and boolean), column types and
/// priorities, and IPAddress's extra age cell (upstream's printer appends
/// it without a column; kubectl drops it).
async fn table_json(api: &Api) {
    const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let pc = api
        .get_as(
            "/apis/scheduling.k8s.io/v1/priorityclasses/printers-high",
            TABLE,
        )
        .await
        .expect(200);
    let columns: Vec<(Value, Value, Value)> = pc["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| (c["name"].clone(), c["type"].clone(), c["priority"].clone()))
        .collect();
    assert_eq!(
        columns,
        [
            (json!("Name"), json!("string"), json!(0)),
            (json!("Value"), json!("integer"), json!(0)),
            (json!("Global-Default"), json!("boolean"), json!(0)),
            (json!("Age"), json!("string"), json!(0)),
            (json!("PreemptionPolicy"), json!("string"), json!(0)),
        ]
    );
    let cells = &pc["rows"][0]["cells"];
    assert_eq!(cells[0], "printers-high");
    assert_eq!(cells[1], 100_000);
    assert_eq!(cells[2], false);
    assert_eq!(cells[4], "Never");

    let ip = api
        .get_as("/apis/networking.k8s.io/v1/ipaddresses/10.250.0.7", TABLE)
        .await
        .expect(200);
    assert_eq!(ip["columnDefinitions"].as_array().map(Vec::len), Some(2));
    let cells = ip["rows"][0]["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 3, "{ip}");
    assert_eq!(cells[1], "services/printers/svc-1");
    assert!(is_age(cells[2].as_str().unwrap_or("")), "{ip}");

    // A kind with the default convertor: `Created At` is a date column and
    // an empty list has `"rows": null`, as upstream's default table.
    let roles = api
        .get_as(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/printers-extra/roles",
            TABLE,
        )
        .await
        .expect(200);
    assert_eq!(roles["columnDefinitions"][1]["name"], "Created At");
    assert_eq!(roles["columnDefinitions"][1]["type"], "date");
    assert_eq!(roles["rows"], Value::Null, "{roles}");
}

/// (group, kind) of a case's object.
fn group_kind(c: &Case) -> (String, String) {
    let api_version = c.object["apiVersion"].as_str().unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    (
        group.to_owned(),
        c.object["kind"].as_str().unwrap_or("").to_owned(),
    )
}

/// Every (group, kind) that legacy discovery lists with the `list` verb
/// (subresources excluded), over all served group/versions.
async fn listable_kinds(api: &Api) -> BTreeSet<(String, String)> {
    // Built-in kinds only: kinds served from CRDs (Skein's own
    // federation.skein.io included) print their printer columns, which the
    // CRD suites check (test/tests/crd.rs).
    let crds = api
        .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        .await
        .json();
    let custom: BTreeSet<String> = crds["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["spec"]["group"].as_str().map(str::to_owned))
        .collect();
    let mut paths = vec![("".to_owned(), "/api/v1".to_owned())];
    let groups = api.get("/apis").await.json();
    for g in groups["groups"].as_array().into_iter().flatten() {
        let name = g["name"].as_str().unwrap_or("");
        if custom.contains(name) {
            continue;
        }
        for v in g["versions"].as_array().into_iter().flatten() {
            let gv = v["groupVersion"].as_str().unwrap_or("");
            paths.push((name.to_owned(), format!("/apis/{gv}")));
        }
    }
    let mut kinds = BTreeSet::new();
    for (group, path) in paths {
        let list = api.get(&path).await.json();
        for r in list["resources"].as_array().into_iter().flatten() {
            let name = r["name"].as_str().unwrap_or("");
            let listable = r["verbs"]
                .as_array()
                .is_some_and(|v| v.iter().any(|v| v == "list"));
            if listable && !name.contains('/') {
                kinds.insert((group.clone(), r["kind"].as_str().unwrap_or("").to_owned()));
            }
        }
    }
    kinds
}
