//! Query and path parameters of kube-apiserver's OpenAPI documents: names,
//! types and descriptions as upstream publishes them
//! (`kubernetes/api/openapi-spec/v3/apis__apps__v1_openapi.json`).

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum In {
    /// `in: query`.
    Query,
    /// `in: path` (always required).
    Path,
}

/// One parameter as published.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Parameter name.
    pub name: &'static str,
    /// Where it goes.
    pub location: In,
    /// JSON type (`string`, `integer`, `boolean`).
    pub ty: &'static str,
    /// Upstream description.
    pub description: &'static str,
}

/// `allowWatchBookmarks`.
pub const ALLOW_WATCH_BOOKMARKS: Param = Param {
    name: "allowWatchBookmarks",
    location: In::Query,
    ty: "boolean",
    description: "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server's discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored.",
};

/// `continue`.
pub const CONTINUE: Param = Param {
    name: "continue",
    location: In::Query,
    ty: "string",
    description: "The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize. If the specified continue value is no longer valid whether due to expiration (generally five to fifteen minutes) or a configuration change on the server, the server will respond with a 410 ResourceExpired error together with a continue token. If the client needs a consistent list, it must restart their list without the continue field. Otherwise, the client may send another list request with the token received with the 410 error, the server will respond with a list starting from the next key, but from the latest snapshot, which is inconsistent from the previous list results - objects that are created, modified, or deleted after the first list request will be included in the response, as long as their keys are after the \"next key\".\n\nThis field is not supported when watch is true. Clients may start a watch from the last resourceVersion value returned by the server and not miss any modifications.",
};

/// `dryRun`.
pub const DRY_RUN: Param = Param {
    name: "dryRun",
    location: In::Query,
    ty: "string",
    description: "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed",
};

/// `fieldManager`.
pub const FIELD_MANAGER: Param = Param {
    name: "fieldManager",
    location: In::Query,
    ty: "string",
    description: "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.",
};

/// `fieldManager`.
pub const FIELD_MANAGER_PATCH: Param = Param {
    name: "fieldManager",
    location: In::Query,
    ty: "string",
    description: "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint. This field is required for apply requests (application/apply-patch) but optional for non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch).",
};

/// `fieldSelector`.
pub const FIELD_SELECTOR: Param = Param {
    name: "fieldSelector",
    location: In::Query,
    ty: "string",
    description: "A selector to restrict the list of returned objects by their fields. Defaults to everything.",
};

/// `fieldValidation`.
pub const FIELD_VALIDATION: Param = Param {
    name: "fieldValidation",
    location: In::Query,
    ty: "string",
    description: "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.",
};

/// `force`.
pub const FORCE: Param = Param {
    name: "force",
    location: In::Query,
    ty: "boolean",
    description: "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.",
};

/// `gracePeriodSeconds`.
pub const GRACE_PERIOD_SECONDS: Param = Param {
    name: "gracePeriodSeconds",
    location: In::Query,
    ty: "integer",
    description: "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.",
};

/// `labelSelector`.
pub const LABEL_SELECTOR: Param = Param {
    name: "labelSelector",
    location: In::Query,
    ty: "string",
    description: "A selector to restrict the list of returned objects by their labels. Defaults to everything.",
};

/// `limit`.
pub const LIMIT: Param = Param {
    name: "limit",
    location: In::Query,
    ty: "integer",
    description: "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results. Setting a limit may return fewer than the requested amount of items (up to zero items) in the event all requested objects are filtered out and clients should only use the presence of the continue field to determine whether more results are available. Servers may choose not to support the limit argument and will return all of the available results. If limit is specified and the continue field is empty, clients may assume that no more results are available. This field is not supported if watch is true.\n\nThe server guarantees that the objects returned when using continue will be identical to issuing a single list call without a limit - that is, no objects created, modified, or deleted after the first request is issued will be included in any subsequent continued requests. This is sometimes referred to as a consistent snapshot, and ensures that a client that is using limit to receive smaller chunks of a very large result can ensure they see all possible objects. If objects are updated during a chunked list the version of the object that was present at the time the first list result was calculated is returned.",
};

/// `namespace`.
pub const NAMESPACE: Param = Param {
    name: "namespace",
    location: In::Path,
    ty: "string",
    description: "object name and auth scope, such as for teams and projects",
};

/// `orphanDependents`.
pub const ORPHAN_DEPENDENTS: Param = Param {
    name: "orphanDependents",
    location: In::Query,
    ty: "boolean",
    description: "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the \"orphan\" finalizer will be added to/removed from the object's finalizers list. Either this field or PropagationPolicy may be set, but not both.",
};

/// `pretty`.
pub const PRETTY: Param = Param {
    name: "pretty",
    location: In::Query,
    ty: "string",
    description: "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).",
};

/// `propagationPolicy`.
pub const PROPAGATION_POLICY: Param = Param {
    name: "propagationPolicy",
    location: In::Query,
    ty: "string",
    description: "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground.",
};

/// `resourceVersion`.
pub const RESOURCE_VERSION: Param = Param {
    name: "resourceVersion",
    location: In::Query,
    ty: "string",
    description: "resourceVersion sets a constraint on what resource versions a request may be served from. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset",
};

/// `resourceVersionMatch`.
pub const RESOURCE_VERSION_MATCH: Param = Param {
    name: "resourceVersionMatch",
    location: In::Query,
    ty: "string",
    description: "resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset",
};

/// `sendInitialEvents`.
pub const SEND_INITIAL_EVENTS: Param = Param {
    name: "sendInitialEvents",
    location: In::Query,
    ty: "boolean",
    description: "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection. Once all such events have been sent, a synthetic \"Bookmark\" event  will be sent. The bookmark will report the ResourceVersion (RV) corresponding to the set of objects, and be marked with `\"k8s.io/initial-events-end\": \"true\"` annotation. Afterwards, the watch stream will proceed as usual, sending watch events corresponding to changes (subsequent to the RV) to objects watched.\n\nWhen `sendInitialEvents` option is set, we require `resourceVersionMatch` option to also be set. The semantic of the watch request is as following: - `resourceVersionMatch` = NotOlderThan\n  is interpreted as \"data at least as new as the provided `resourceVersion`\"\n  and the bookmark event is send when the state is synced\n  to a `resourceVersion` at least as fresh as the one provided by the ListOptions.\n  If `resourceVersion` is unset, this is interpreted as \"consistent read\" and the\n  bookmark event is send when the state is synced at least to the moment\n  when request started being processed.\n- `resourceVersionMatch` set to any other value or unset\n  Invalid error is returned.\n\nDefaults to true if `resourceVersion=\"\"` or `resourceVersion=\"0\"` (for backward compatibility reasons) and to false otherwise.",
};

/// `timeoutSeconds`.
pub const TIMEOUT_SECONDS: Param = Param {
    name: "timeoutSeconds",
    location: In::Query,
    ty: "integer",
    description: "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.",
};

/// `watch`.
pub const WATCH: Param = Param {
    name: "watch",
    location: In::Query,
    ty: "boolean",
    description: "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion.",
};
