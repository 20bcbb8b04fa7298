//! The OpenAPI of CustomResourceDefinitions end to end (issue 10), against
//! `skein serve` with kubectl 1.35 and 1.32 and raw HTTPS:
//! - once a CRD is Established, `/openapi/v3` lists its group/version, and
//!   the document carries the kind `<reversed-group>.<version>.<Kind>` with
//!   `x-kubernetes-group-version-kind` (which `kubectl apply` and
//!   `kubectl explain` look for), the CRD's fields and `x-kubernetes-*`
//!   extensions, `metadata` as an `allOf`-wrapped ObjectMeta reference,
//!   and PATCH operations without the strategic-merge media type
//!   (apiextensions-apiserver `builder.go`: JSON, merge and apply only);
//! - `/openapi/v2` has the same kind under `#/definitions/`;
//! - `kubectl explain <kind>.spec` shows the CRD's fields and descriptions;
//! - deleting the CRD removes the group/version from the index and the
//!   kind from v2.
//!
//! Each kubectl binary works with its own group (`openapi<i>.example.com`).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skein_tests::cli::{ok, start};
use skein_tests::http::Api;

/// How long a condition may take to show.
const SETTLE: Duration = Duration::from_secs(30);

fn widget_crd(group: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "description": "A Widget is a test kind.",
                    "type": "object",
                    "properties": {
                        "spec": {
                            "description": "What the widget should be.",
                            "type": "object",
                            "required": ["size"],
                            "properties": {
                                "size": {"description": "How big, in units.", "type": "integer", "minimum": 1},
                                "colour": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                                "ports": {
                                    "type": "array",
                                    "x-kubernetes-list-type": "map",
                                    "x-kubernetes-list-map-keys": ["name"],
                                    "items": {"type": "object", "required": ["name"], "properties": {
                                        "name": {"type": "string"}, "port": {"type": "integer"}}}
                                }
                            }
                        },
                        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
                    }
                }}
            }]
        }
    })
}

/// Polls `check` every 100 ms until it is `Ok`, or panics after `SETTLE`.
async fn eventually<T>(what: &str, mut check: impl AsyncFnMut() -> Result<T, String>) -> T {
    let start = Instant::now();
    loop {
        match check().await {
            Ok(v) => return v,
            Err(last) => assert!(
                start.elapsed() < SETTLE,
                "{what}: not within {SETTLE:?}; last seen:\n{last}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn established(api: &Api, name: &str) {
    let path = format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}");
    eventually(&format!("{name} Established"), async || {
        let crd = api.get(&path).await.json();
        let conditions = crd["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if conditions
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
        {
            Ok(())
        } else {
            Err(crd.to_string())
        }
    })
    .await;
}

#[tokio::test]
async fn crd_openapi_follows_the_crd() {
    let env = start().await;
    let api = Api::new(&env.server);
    for (i, k) in env.each() {
        let group = format!("openapi{i}.example.com");
        let key = format!("apis/{group}/v1");
        let def = format!("com.example.openapi{i}.v1.Widget");
        let crd = widget_crd(&group);
        let file = env.manifest(&crd);
        ok(k, &env.server, &["create", "-f", &file]);
        established(&api, &format!("widgets.{group}")).await;

        // The v3 index lists the group/version; its document has the kind.
        let url = eventually("the group/version in /openapi/v3", async || {
            let index = api.get("/openapi/v3").await.json();
            index["paths"][&key]["serverRelativeURL"]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| index.to_string())
        })
        .await;
        let doc = api.get(&url).await.expect(200);
        assert_eq!(doc["openapi"], "3.0.0");
        let widget = &doc["components"]["schemas"][&def];
        assert_eq!(
            widget["x-kubernetes-group-version-kind"],
            json!([{"group": group, "kind": "Widget", "version": "v1"}]),
            "{widget}"
        );
        assert_eq!(widget["description"], "A Widget is a test kind.");
        assert_eq!(
            widget["properties"]["metadata"]["allOf"],
            json!([{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}])
        );
        let spec = &widget["properties"]["spec"];
        assert_eq!(spec["required"], json!(["size"]));
        assert_eq!(spec["properties"]["colour"]["default"], "red");
        assert_eq!(
            spec["properties"]["ports"]["x-kubernetes-list-map-keys"],
            json!(["name"])
        );
        let list = &doc["components"]["schemas"][format!("{def}List")];
        assert_eq!(
            list["properties"]["items"]["items"]["$ref"],
            format!("#/components/schemas/{def}")
        );
        assert!(
            doc["components"]["schemas"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
                .is_object()
        );
        // Every $ref resolves inside the document.
        let text = doc.to_string();
        for r in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let name = r.split('"').next().unwrap_or_default();
            assert!(
                doc["components"]["schemas"][name].is_object(),
                "dangling $ref {name}"
            );
        }
        let item = format!("/apis/{group}/v1/namespaces/{{namespace}}/widgets/{{name}}");
        let patch = &doc["paths"][&item]["patch"];
        let types: Vec<&String> = patch["requestBody"]["content"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        assert_eq!(
            types,
            [
                "application/apply-patch+yaml",
                "application/json-patch+json",
                "application/merge-patch+json"
            ],
            "{patch}"
        );
        assert_eq!(
            patch["x-kubernetes-group-version-kind"],
            json!({"group": group, "kind": "Widget", "version": "v1"})
        );
        assert!(doc["paths"][format!("{item}/status")]["get"].is_object());

        // v2 has it too, without the default.
        let v2 = api
            .get_as("/openapi/v2", "application/json")
            .await
            .expect(200);
        let w2 = &v2["definitions"][&def];
        assert_eq!(
            w2["properties"]["metadata"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert!(
            w2["properties"]["spec"]["properties"]["colour"]
                .get("default")
                .is_none()
        );

        // kubectl explain reads it. The group/version is named: the previous
        // kubectl's group (deleted below) may still be in the shared discovery
        // cache under the same plural.
        let api_version = format!("--api-version={group}/v1");
        let out = ok(k, &env.server, &["explain", "widgets.spec", &api_version]);
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines.contains(&format!("GROUP:      {group}").as_str()),
            "{out}"
        );
        assert!(lines.contains(&"KIND:       Widget"), "{out}");
        assert!(lines.contains(&"FIELD: spec <Object>"), "{out}");
        assert!(lines.contains(&"    What the widget should be."), "{out}");
        assert!(lines.contains(&"  size\t<integer> -required-"), "{out}");
        assert!(lines.contains(&"    How big, in units."), "{out}");
        assert!(lines.contains(&"  ports\t<[]Object>"), "{out}");

        // Deleting the CRD takes it out of both documents.
        ok(
            k,
            &env.server,
            &["delete", "crd", &format!("widgets.{group}")],
        );
        eventually("the group/version gone from /openapi/v3", async || {
            let index = api.get("/openapi/v3").await.json();
            if index["paths"].get(&key).is_none() {
                Ok(())
            } else {
                Err(index.to_string())
            }
        })
        .await;
        let v2 = api
            .get_as("/openapi/v2", "application/json")
            .await
            .expect(200);
        assert!(v2["definitions"].get(&def).is_none());
        assert!(
            api.get(&format!("/openapi/v3/{key}"))
                .await
                .status
                .is_client_error()
        );
    }
}
