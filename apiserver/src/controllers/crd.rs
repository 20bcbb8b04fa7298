//! The CustomResourceDefinition controllers of apiextensions-apiserver,
//! folded into one loop: naming (`NamesAccepted`, `acceptedNames`),
//! establishing (`Established`), serving (the resource table's custom
//! rows), and finalizing (a deleted CRD's objects are deleted, then its
//! `customresourcecleanup.apiextensions.k8s.io` finalizer is removed).
//! Also installs Skein's own `federation.skein.io` CRDs at start.
//!
//! # Contracts
//! - [`sync`] is idempotent: it lists every CRD, swaps the table's custom
//!   rows for the ones the CRDs ask for, and writes a CRD's status only when
//!   it changed. The loop runs it after every CRD change (and every 30 s),
//!   so a change takes effect as soon as the watch delivers it.
//! - The table is rebuilt before statuses are written, so a client that
//!   waits for `Established` finds the resource served.
//! - Cleanup deletes objects through the registry (their own finalizers and
//!   the garbage collector apply); the CRD goes only when none is left.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::registry::custom::{self, CLEANUP_FINALIZER, Naming};
use crate::registry::list::ListQuery;
use crate::registry::watch::{WatchItem, WatchQuery};
use crate::registry::{
    DeleteOptions, Registry, ResourceInfo, Target, WriteOptions, object, resource,
};
use crate::status::ApiError;

const MANAGER: &str = "skein-apiextensions-controller";

/// The group of Skein's own API.
pub const FEDERATION_GROUP: &str = "federation.skein.io";
/// Its one version.
pub const FEDERATION_VERSION: &str = "v1alpha1";

/// Skein's own API, as CRD manifests compiled into the binary.
const FEDERATION_CRDS: &[&str] = &[
    include_str!("../../crds/federation.skein.io/clusters.yaml"),
    include_str!("../../crds/federation.skein.io/placements.yaml"),
    include_str!("../../crds/federation.skein.io/clusterplacements.yaml"),
    include_str!("../../crds/federation.skein.io/federations.yaml"),
];

fn opts() -> WriteOptions {
    WriteOptions {
        field_manager: MANAGER.into(),
        ..WriteOptions::default()
    }
}

fn crd_resource() -> Result<std::sync::Arc<ResourceInfo>, ApiError> {
    resource::builtin(custom::GROUP, "v1", "customresourcedefinitions")
        .ok_or_else(|| ApiError::internal("customresourcedefinitions are not served"))
}

/// With `federation` (the control-plane role), creates or upgrades the
/// `federation.skein.io` CRDs (a manifest whose spec differs from the stored
/// one replaces it); then serves every CRD. A member (`federation` false)
/// serves only its users' CRDs.
pub async fn start(registry: &Registry, federation: bool) -> Result<(), ApiError> {
    let res = crd_resource()?;
    let manifests: &[&str] = if federation { FEDERATION_CRDS } else { &[] };
    for text in manifests {
        let manifest: Value = serde_saphyr::from_str(text).map_err(|e| {
            ApiError::internal(format!("a built-in CRD manifest is malformed: {e}"))
        })?;
        let name = object::name(&manifest).to_string();
        match registry.get(&res, "", &name).await {
            Ok(current) => {
                let mut wanted = manifest.clone();
                skein_apiextensions::crd::set_defaults(&mut wanted);
                if current.get("spec") != wanted.get("spec") {
                    let spec = manifest.get("spec").cloned().unwrap_or(Value::Null);
                    registry
                        .update_with(&res, "", &name, Target::Main, &opts(), move |cur| {
                            let mut next = cur.clone();
                            next["spec"] = spec.clone();
                            Ok(next)
                        })
                        .await?;
                    tracing::info!(crd = %name, "upgraded a built-in CRD");
                }
            }
            Err(e) if e.code().as_u16() == 404 => {
                let obj = res
                    .normalize(manifest)
                    .map_err(|e| ApiError::internal(e.to_string()))?;
                registry.create(&res, "", obj, &opts()).await?;
                tracing::info!(crd = %name, "installed a built-in CRD");
            }
            Err(e) => return Err(e),
        }
    }
    sync(registry).await?;
    if federation {
        ensure_federation(registry).await?;
    }
    Ok(())
}

/// Creates the `Federation` singleton `default` when it is missing: the
/// object behind the aggregated-mode `federations/default/proxy` path, and
/// what a host lists at the root path (`http/host_view.rs`).
async fn ensure_federation(registry: &Registry) -> Result<(), ApiError> {
    let Some(res) = registry
        .resources()
        .find(FEDERATION_GROUP, FEDERATION_VERSION, "federations")
    else {
        return Err(ApiError::internal("federations are not served"));
    };
    let manifest = serde_json::json!({
        "apiVersion": format!("{FEDERATION_GROUP}/{FEDERATION_VERSION}"),
        "kind": "Federation",
        "metadata": {"name": "default"},
    });
    let obj = res
        .normalize(manifest)
        .map_err(|e| ApiError::internal(e.to_string()))?;
    match registry.create(&res, "", obj, &opts()).await {
        Ok(_) => {
            tracing::info!("created the Federation default");
            Ok(())
        }
        Err(e) if e.code().as_u16() == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Runs the loop until the runtime shuts down.
pub async fn run(registry: Registry) {
    loop {
        if let Err(e) = watch_once(&registry).await {
            tracing::warn!(controller = "crd", error = %e, "restarting");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn watch_once(registry: &Registry) -> Result<(), ApiError> {
    let res = crd_resource()?;
    let mut events = registry.watch(&res, None, WatchQuery::default()).await?;
    sync(registry).await?;
    loop {
        // A CRD waiting for its custom resources to go is looked at again
        // every second (their deletion is no CRD event); otherwise every
        // 30 s as a safety net.
        let terminating = registry
            .list(&res, None, &ListQuery::default())
            .await?
            .items
            .iter()
            .any(object::is_deleting);
        let period = if terminating {
            Duration::from_secs(1)
        } else {
            Duration::from_secs(30)
        };
        let next = tokio::time::timeout(period, events.next()).await;
        match next {
            Ok(None) => return Ok(()),
            Ok(Some(WatchItem::Error(e))) => {
                return Err(ApiError::internal(format!("watch failed: {e:?}")));
            }
            Ok(Some(_)) | Err(_) => {
                // Coalesce a burst of changes into one pass.
                while let Ok(Some(_)) =
                    tokio::time::timeout(Duration::from_millis(5), events.next()).await
                {
                }
                sync(registry).await?;
            }
        }
    }
}

/// One pass over every CRD (see the module's contracts).
pub async fn sync(registry: &Registry) -> Result<(), ApiError> {
    let res = crd_resource()?;
    let crds = registry
        .list(&res, None, &ListQuery::default())
        .await?
        .items;
    let (rows, outcomes) = custom::rows(&crds);
    registry.resources().replace_custom(rows);
    let mut released = false;
    for crd in &crds {
        let name = object::name(crd).to_string();
        if let Some(naming) = outcomes.get(&name) {
            write_status(registry, &res, crd, naming).await?;
        }
        if object::is_deleting(crd)
            && object::finalizers(crd)
                .iter()
                .any(|f| f == CLEANUP_FINALIZER)
        {
            released |= finalize(registry, &res, crd).await?;
        }
    }
    if released {
        // A CRD just went: stop serving it before anyone sees it gone.
        let crds = registry
            .list(&res, None, &ListQuery::default())
            .await?
            .items;
        registry.resources().replace_custom(custom::rows(&crds).0);
    }
    Ok(())
}

/// The status the naming and establishing controllers want for `crd`.
fn desired_status(crd: &Value, naming: &Naming) -> Value {
    let mut next = crd.clone();
    let (accepted, reason, message) = &naming.names_accepted;
    if *accepted || crd.pointer("/status/acceptedNames/kind").is_some() {
        next["status"]["acceptedNames"] = naming.accepted.to_json();
    }
    custom::set_condition(&mut next, "NamesAccepted", *accepted, reason, message);
    let established = crd
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Established" && c["status"] == "True");
    if *accepted {
        custom::set_condition(
            &mut next,
            "Established",
            true,
            "InitialNamesAccepted",
            "the initial names have been accepted",
        );
    } else if !established {
        custom::set_condition(
            &mut next,
            "Established",
            false,
            "NotAccepted",
            "not all names are accepted",
        );
    }
    // Skein's own condition: a conversion it cannot perform (a webhook
    // given by a Service reference: there is no service network here).
    let converter = crate::registry::conversion::custom::CustomConverter::new(crd);
    match converter.unsupported_reason() {
        Some(why) => custom::set_condition(
            &mut next,
            CONVERSION_CONDITION,
            false,
            "ConversionUnsupported",
            why,
        ),
        None => {
            if let Some(list) = next
                .pointer_mut("/status/conditions")
                .and_then(Value::as_array_mut)
            {
                list.retain(|c| c["type"] != CONVERSION_CONDITION);
            }
        }
    }
    next.get("status").cloned().unwrap_or_else(|| json!({}))
}

/// The condition that reports a conversion Skein cannot perform.
pub const CONVERSION_CONDITION: &str = "ConversionSupported";

/// `status` without the condition timestamps, to compare.
fn comparable(status: Option<&Value>) -> Value {
    let mut s = status.cloned().unwrap_or_else(|| json!({}));
    if let Some(list) = s.get_mut("conditions").and_then(Value::as_array_mut) {
        for c in list {
            if let Some(c) = c.as_object_mut() {
                c.remove("lastTransitionTime");
            }
        }
    }
    s
}

async fn write_status(
    registry: &Registry,
    res: &ResourceInfo,
    crd: &Value,
    naming: &Naming,
) -> Result<(), ApiError> {
    let status = desired_status(crd, naming);
    if comparable(Some(&status)) == comparable(crd.get("status")) {
        return Ok(());
    }
    let name = object::name(crd).to_string();
    let naming = naming.clone();
    let result = registry
        .update_with(res, "", &name, Target::Status, &opts(), move |cur| {
            let mut next = cur.clone();
            next["status"] = desired_status(cur, &naming);
            Ok(next)
        })
        .await;
    match result {
        Ok(_) => Ok(()),
        // Deleted meanwhile: the next pass sees it gone.
        Err(e) if e.code().as_u16() == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Deletes the objects of a terminating CRD; removes the cleanup finalizer
/// when none is left (then `true`: the CRD is gone or going).
async fn finalize(registry: &Registry, res: &ResourceInfo, crd: &Value) -> Result<bool, ApiError> {
    let name = object::name(crd).to_string();
    let storage = registry
        .resources()
        .stored()
        .into_iter()
        .find(|r| r.custom.as_ref().is_some_and(|c| c.crd_name == name));
    let mut remaining = 0usize;
    if let Some(rows) = storage {
        let items = registry
            .list(&rows, None, &ListQuery::default())
            .await?
            .items;
        remaining = items.len();
        for item in &items {
            if object::is_deleting(item) {
                continue;
            }
            let ns = object::namespace(item).to_string();
            match registry
                .delete(&rows, &ns, object::name(item), &DeleteOptions::default())
                .await
            {
                Ok(_) => {}
                Err(e) if e.code().as_u16() == 404 => {}
                Err(e) => return Err(e),
            }
        }
        let marked = crd
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Terminating" && c["reason"] == "InstanceDeletionInProgress");
        if remaining > 0 && !marked {
            // Mark progress once.
            let _ = registry
                .update_with(res, "", &name, Target::Status, &opts(), |cur| {
                    let mut next = cur.clone();
                    custom::set_condition(
                        &mut next,
                        "Terminating",
                        true,
                        "InstanceDeletionInProgress",
                        "CustomResource deletion is in progress",
                    );
                    Ok(next)
                })
                .await;
        }
        if remaining > 0 {
            let left = registry
                .list(&rows, None, &ListQuery::default())
                .await?
                .items;
            remaining = left.len();
        }
    }
    if remaining > 0 {
        return Ok(false);
    }
    let result = registry
        .update_with(res, "", &name, Target::Main, &opts(), |cur| {
            let mut next = cur.clone();
            let kept: Vec<String> = object::finalizers(cur)
                .into_iter()
                .filter(|f| f != CLEANUP_FINALIZER)
                .collect();
            object::set_finalizers(&mut next, &kept);
            Ok(next)
        })
        .await;
    match result {
        Ok(_) => Ok(true),
        Err(e) if e.code().as_u16() == 404 => Ok(true),
        Err(e) => Err(e),
    }
}
