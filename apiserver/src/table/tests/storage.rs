//! PersistentVolume and PersistentVolumeClaim:
//! `TestPrintPersistentVolume`, `TestPrintPersistentVolumeClaim`.

use serde_json::{Value, json};

use super::{check, just_now};

#[test]
fn persistent_volumes() {
    let pv = |name: &str, mode: &str, size: &str, phase: &str, extra: Value| {
        let mut spec = json!({"claimRef": {"name": "test", "namespace": "default"},
                              "accessModes": [mode], "capacity": {"storage": size}});
        if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
            spec.extend(extra.clone());
        }
        json!({"metadata": {"name": name}, "spec": spec, "status": {"phase": phase}})
    };
    let row = |name: &str, size: &str, mode: &str, phase: &str, class: &str, vac: &str| {
        json!([
            name,
            size,
            mode,
            "",
            phase,
            "default/test",
            class,
            vac,
            "",
            "<unknown>",
            "<unset>"
        ])
    };
    check(
        "",
        "PersistentVolume",
        pv("test1", "ReadOnlyMany", "4Gi", "Bound", json!({})),
        row("test1", "4Gi", "ROX", "Bound", "", "<unset>"),
    );
    check(
        "",
        "PersistentVolume",
        pv("test2", "ReadOnlyMany", "4Gi", "Failed", json!({})),
        row("test2", "4Gi", "ROX", "Failed", "", "<unset>"),
    );
    check(
        "",
        "PersistentVolume",
        pv("test3", "ReadWriteMany", "10Gi", "Pending", json!({})),
        row("test3", "10Gi", "RWX", "Pending", "", "<unset>"),
    );
    check(
        "",
        "PersistentVolume",
        pv(
            "test4",
            "ReadWriteOnce",
            "10Gi",
            "Pending",
            json!({"storageClassName": "my-scn"}),
        ),
        row("test4", "10Gi", "RWO", "Pending", "my-scn", "<unset>"),
    );
    check(
        "",
        "PersistentVolume",
        pv(
            "test4",
            "ReadWriteOnce",
            "10Gi",
            "Pending",
            json!({"storageClassName": "my-scn", "volumeAttributesClassName": "my-vacn"}),
        ),
        row("test4", "10Gi", "RWO", "Pending", "my-scn", "my-vacn"),
    );
    check(
        "",
        "PersistentVolume",
        pv(
            "test5",
            "ReadWriteOnce",
            "10240Mi",
            "Available",
            json!({"storageClassName": "my-scn"}),
        ),
        row("test5", "10Gi", "RWO", "Available", "my-scn", "<unset>"),
    );
    // Deleting, annotation-classed, multi-mode, block, no claim or capacity.
    let pv = json!({
        "metadata": {"name": "pv", "deletionTimestamp": just_now(),
                     "annotations": {"volume.beta.kubernetes.io/storage-class": "beta"}},
        "spec": {"accessModes": ["ReadWriteOncePod", "ReadWriteOnce", "ReadWriteOnce", "ReadOnlyMany"],
                 "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "ignored", "volumeMode": "Block"},
        "status": {"phase": "Released", "reason": "Gone"},
    });
    check(
        "",
        "PersistentVolume",
        pv,
        json!([
            "pv",
            "0",
            "RWO,ROX,RWOP",
            "Retain",
            "Terminating",
            "",
            "beta",
            "<unset>",
            "Gone",
            "<unknown>",
            "Block"
        ]),
    );
}

#[test]
fn persistent_volume_claims() {
    let pvc = |name: &str, spec: Value, phase: &str, mode: &str, size: &str| {
        json!({"metadata": {"name": name}, "spec": spec,
               "status": {"phase": phase, "accessModes": [mode], "capacity": {"storage": size}}})
    };
    check(
        "",
        "PersistentVolumeClaim",
        pvc(
            "test1",
            json!({"volumeName": "my-volume", "volumeMode": "Filesystem"}),
            "Bound",
            "ReadOnlyMany",
            "4Gi",
        ),
        json!([
            "test1",
            "Bound",
            "my-volume",
            "4Gi",
            "ROX",
            "",
            "<unset>",
            "<unknown>",
            "Filesystem"
        ]),
    );
    check(
        "",
        "PersistentVolumeClaim",
        pvc(
            "test2",
            json!({"volumeMode": "Filesystem"}),
            "Lost",
            "ReadOnlyMany",
            "4Gi",
        ),
        json!([
            "test2",
            "Lost",
            "",
            "",
            "",
            "",
            "<unset>",
            "<unknown>",
            "Filesystem"
        ]),
    );
    check(
        "",
        "PersistentVolumeClaim",
        pvc(
            "test3",
            json!({"volumeName": "my-volume", "volumeMode": "Filesystem"}),
            "Pending",
            "ReadWriteMany",
            "10Gi",
        ),
        json!([
            "test3",
            "Pending",
            "my-volume",
            "10Gi",
            "RWX",
            "",
            "<unset>",
            "<unknown>",
            "Filesystem"
        ]),
    );
    check(
        "",
        "PersistentVolumeClaim",
        pvc(
            "test4",
            json!({"volumeName": "my-volume", "storageClassName": "my-scn", "volumeMode": "Filesystem"}),
            "Pending",
            "ReadWriteOnce",
            "10Gi",
        ),
        json!([
            "test4",
            "Pending",
            "my-volume",
            "10Gi",
            "RWO",
            "my-scn",
            "<unset>",
            "<unknown>",
            "Filesystem"
        ]),
    );
    check(
        "",
        "PersistentVolumeClaim",
        pvc(
            "test5",
            json!({"volumeName": "my-volume", "storageClassName": "my-scn"}),
            "Pending",
            "ReadWriteOnce",
            "10Gi",
        ),
        json!([
            "test5",
            "Pending",
            "my-volume",
            "10Gi",
            "RWO",
            "my-scn",
            "<unset>",
            "<unknown>",
            "<unset>"
        ]),
    );
    check(
        "",
        "PersistentVolumeClaim",
        pvc(
            "test5",
            json!({"volumeName": "my-volume", "storageClassName": "my-scn", "volumeAttributesClassName": "my-vacn"}),
            "Pending",
            "ReadWriteOnce",
            "10Gi",
        ),
        json!([
            "test5",
            "Pending",
            "my-volume",
            "10Gi",
            "RWO",
            "my-scn",
            "my-vacn",
            "<unknown>",
            "<unset>"
        ]),
    );
    // The beta annotation wins even when empty; a deleting claim is Terminating.
    let annotated = json!({"metadata": {"name": "c", "deletionTimestamp": just_now(),
                                        "annotations": {"volume.beta.kubernetes.io/storage-class": ""}},
                           "spec": {"storageClassName": "standard", "volumeName": "v"},
                           "status": {"phase": "Bound"}});
    check(
        "",
        "PersistentVolumeClaim",
        annotated,
        json!(["c", "Terminating", "v", "0", "", ""]),
    );
}
