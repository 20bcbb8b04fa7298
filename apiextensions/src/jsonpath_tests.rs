//! Tests of [`super`]: client-go `jsonpath_test.go` and `parser_test.go`
//! facts, and properties.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

/// Upstream's `Execute`: each result list printed with `PrintResults`
/// (values joined by a space), lists concatenated. Maps and arrays print
/// as JSON; test data avoids integral floats inside them.
fn execute(template: &str, data: &Value) -> Result<String, String> {
    let path = JsonPath::parse_template(template)?;
    let lists = path.find_results(data)?;
    let mut out = String::new();
    for list in lists {
        let texts: Vec<String> = list.iter().map(|v| text(v)).collect();
        out.push_str(&texts.join(" "));
    }
    Ok(out)
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "null".to_owned(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => n.as_f64().map(|f| f.to_string()).unwrap_or_default(),
        },
        other => other.to_string(),
    }
}

fn ok(template: &str, data: &Value, want: &str) {
    assert_eq!(execute(template, data).as_deref(), Ok(want), "{template}");
}

fn eval_err(template: &str, data: &Value, want: &str) {
    assert_eq!(execute(template, data), Err(want.to_owned()), "{template}");
}

fn parse_err(template: &str, want: &str) {
    assert_eq!(
        JsonPath::parse_template(template).map(|_| ()),
        Err(want.to_owned()),
        "{template}"
    );
}

fn types() -> Value {
    json!({
        "bools": [true, false, true, false],
        "integers": [1, 2, 3, 4],
        "floats": [1.5, 2.2, 3.3, 4.5],
        "strings": ["one", "two", "three", "four"],
        "interfaces": [true, "one", 1, 1.1],
        "maps": [
            {"name": "one", "value": 1},
            {"name": "two", "value": 2.02},
            {"name": "three", "value": 3.03},
            {"name": "four", "value": 4.04},
        ],
    })
}

/// `TestTypesInput`.
#[test]
fn slices_of_every_type() {
    let t = types();
    ok("{ .bools }", &t, "[true,false,true,false]");
    ok("{ .bools[0] }", &t, "true");
    ok("{ .bools[-1] }", &t, "false");
    ok("{ .bools[0:2] }", &t, "true false");
    ok("{ .bools[:2] }", &t, "true false");
    ok("{ .bools[:4:2] }", &t, "true true");
    ok("{ .integers }", &t, "[1,2,3,4]");
    ok("{ .integers[-2] }", &t, "3");
    ok("{ .integers[:4:2] }", &t, "1 3");
    ok("{ .floats[-2] }", &t, "3.3");
    ok("{ .floats[0:2] }", &t, "1.5 2.2");
    ok("{ .strings }", &t, r#"["one","two","three","four"]"#);
    ok("{ .strings[-2] }", &t, "three");
    ok("{ .strings[:4:2] }", &t, "one three");
    ok("{ .interfaces[0:2] }", &t, "true one");
    ok("{ .interfaces[:4:2] }", &t, "true 1");
    ok("{ .maps[0] }", &t, r#"{"name":"one","value":1}"#);
    ok("{ .maps[-2] }", &t, r#"{"name":"three","value":3.03}"#);
    ok(
        "{ .maps[::2] }",
        &t,
        r#"{"name":"one","value":1} {"name":"three","value":3.03}"#,
    );
    ok(
        "{ .maps[1::2] }",
        &t,
        r#"{"name":"two","value":2.02} {"name":"four","value":4.04}"#,
    );
}

fn store() -> Value {
    json!({
        "Name": "jsonpath",
        "Book": [
            {"Category": "reference", "Author": "Nigel Rees", "Title": "Sayings of the Centurey", "Price": 8.95},
            {"Category": "fiction", "Author": "Evelyn Waugh", "Title": "Sword of Honour", "Price": 12.99},
            {"Category": "fiction", "Author": "Herman Melville", "Title": "Moby Dick", "Price": 8.99},
        ],
        "Bicycle": [
            {"Color": "red", "Price": 19.95, "IsNew": true},
            {"Color": "green", "Price": 20.01, "IsNew": false},
        ],
        "Labels": {"engieer": 10, "web/html": 15, "k8s-app": 20},
        "Employees": {"jason": "manager", "dan": "clerk"},
    })
}

/// `TestStructInput` (map inputs; maps print in key order here).
#[test]
fn store_examples() {
    let s = store();
    ok("hello jsonpath", &Value::Null, "hello jsonpath");
    ok("{..}", &json!([1, 2, 3]), "[1,2,3]");
    ok("{[?(@<5)]}", &json!([2, 6, 3, 7]), "2 3");
    ok(r#"{"{"}"#, &Value::Null, "{");
    ok("{[1,3,4]}", &json!([0, 1, 2, 3, 4]), "1 3 4");
    ok("{[0:2]}", &json!(["Monday", "Tudesday"]), "Monday Tudesday");
    ok("hello {.Name}", &s, "hello jsonpath");
    ok("{$.Labels.web/html}", &s, "15");
    ok("{$.Employees.jason}", &s, "manager");
    ok("{.Labels.k8s-app}", &s, "20");
    ok("{.Bicycle[*].Color}", &s, "red green");
    ok(
        "{.Book[*].Author}",
        &s,
        "Nigel Rees Evelyn Waugh Herman Melville",
    );
    ok(
        r#"{range .Bicycle[*]}{ "{" }{ @.* }{ "} " }{end}"#,
        &s,
        "{red true 19.95} {green false 20.01} ",
    );
    // Map keys in order: Bicycle before Book.
    ok("{..Price}", &s, "19.95 20.01 8.95 12.99 8.99");
    ok("{...Price}", &s, "19.95 20.01 8.95 12.99 8.99");
    parse_err(
        "{............................................................Price}",
        "invalid multiple recursive descent",
    );
    ok(
        "{.Book[-1:]}",
        &s,
        r#"{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}"#,
    );
    ok(
        "{..Book[2]}",
        &s,
        r#"{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}"#,
    );
    ok(
        "{.Bicycle[?(@.IsNew==true)]}",
        &s,
        r#"{"Color":"red","IsNew":true,"Price":19.95}"#,
    );
    // Missing keys are allowed.
    ok("{.hello}", &s, "");
    ok("before-{.hello}after", &s, "before-after");
}

/// `TestStructInput`'s failures (missing keys aside: they are allowed).
#[test]
fn evaluation_errors() {
    let s = store();
    eval_err("{hello}", &s, "unrecognized identifier hello");
    eval_err(
        "{.Labels[0]}",
        &s,
        "map[string]interface {} is not array or slice",
    );
    eval_err(
        "{.Book[?(@.Price<>10)]}",
        &s,
        "unrecognized filter operator <>",
    );
    eval_err(
        "{range .Labels.*}{@}{end}{end}",
        &s,
        "not in range, nothing to end",
    );
}

/// `TestJSONInput`.
#[test]
fn json_input() {
    let points = json!([
        {"id": "i1", "x": 4, "y": -5},
        {"id": "i2", "x": -2, "y": -5, "z": 1},
        {"id": "i3", "x": 8, "y": 3},
        {"id": "i4", "x": -6, "y": -1},
        {"id": "i5", "x": 0, "y": 2, "z": 1},
        {"id": "i6", "x": 1, "y": 4},
        {"id": "i7", "x": null, "y": 4},
    ]);
    ok("{[?(@.z)].id}", &points, "i2 i5");
    ok("{[0]['id']}", &points, "i1");
    ok("{[-1]['x']}", &points, "null");
}

fn nodes() -> Value {
    json!({
        "kind": "List",
        "items": [
            {
                "kind": "None",
                "metadata": {"name": "127.0.0.1", "labels": {"kubernetes.io/hostname": "127.0.0.1"}},
                "status": {
                    "capacity": {"cpu": "4"},
                    "ready": true,
                    "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}],
                },
            },
            {
                "kind": "None",
                "metadata": {"name": "127.0.0.2", "labels": {"kubernetes.io/hostname": "127.0.0.2"}},
                "status": {
                    "capacity": {"cpu": "8"},
                    "ready": false,
                    "addresses": [
                        {"type": "LegacyHostIP", "address": "127.0.0.2"},
                        {"type": "another", "address": "127.0.0.3"},
                    ],
                },
            },
        ],
        "users": [
            {"name": "myself", "user": {}},
            {"name": "e2e", "user": {"username": "admin", "password": "secret"}},
        ],
    })
}

/// `TestKubernetes`.
#[test]
fn kubernetes_examples() {
    let n = nodes();
    ok(
        "{range .items[*]}{.metadata.name}, {end}{.kind}",
        &n,
        "127.0.0.1, 127.0.0.2, List",
    );
    ok(
        r#"{range .items[*]}{.metadata.name}{"\t"}{end}"#,
        &n,
        "127.0.0.1\t127.0.0.2\t",
    );
    ok(
        "{.items[*].status.addresses[*].address}",
        &n,
        "127.0.0.1 127.0.0.2 127.0.0.3",
    );
    ok(
        "{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}",
        &n,
        "127.0.0.1, 127.0.0.2, 127.0.0.3, ",
    );
    ok("{.items[*].metadata.name}", &n, "127.0.0.1 127.0.0.2");
    ok(
        "{.items[*]['metadata.name', 'status.capacity']}",
        &n,
        r#"127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}"#,
    );
    ok(
        "{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}",
        &n,
        r#"[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] "#,
    );
    ok(r#"{.users[?(@.name=="e2e")].user.password}"#, &n, "secret");
    ok(
        r"{.items[0].metadata.labels.kubernetes\.io/hostname}",
        &n,
        "127.0.0.1",
    );
    ok(
        r#"{.items[?(@.metadata.labels.kubernetes\.io/hostname=="127.0.0.1")].kind}"#,
        &n,
        "None",
    );
    ok("{.items[?(@..ready==true)].metadata.name}", &n, "127.0.0.1");
    // Maps in key order: items before users.
    ok("{..name}", &n, "127.0.0.1 127.0.0.2 myself e2e");
}

/// `TestEmptyRange`, `TestNestedRanges`.
#[test]
fn ranges() {
    let empty = json!({"items": []});
    ok("{range .items[*]}{.metadata.name}{end}", &empty, "");
    ok(
        r#"{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}"#,
        &empty,
        "",
    );
    let data = json!({"items": [
        {"metadata": {"name": "pod1"}, "spec": {"containers": [
            {"name": "foo", "another": [{"name": "value1"}, {"name": "value2"}]},
            {"name": "bar", "another": [{"name": "value1"}, {"name": "value2"}]},
        ]}},
        {"metadata": {"name": "pod2"}, "spec": {"containers": [
            {"name": "baz", "another": [{"name": "value1"}, {"name": "value2"}]},
        ]}},
    ]});
    ok(
        r#"{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}"#,
        &data,
        "pod1:foo,bar,+pod2:baz,+",
    );
    ok(
        r##"{range .items[*]}{.metadata.name}{"~"}{range @.spec.containers[*]}{.name}{":"}{range @.another[*]}{.name}{","}{end}{"+"}{end}{"#"}{end}"##,
        &data,
        "pod1~foo:value1,value2,+bar:value1,value2,+#pod2~baz:value1,value2,+#",
    );
    ok(
        r#"{range .items[*]}{.metadata.name}{"\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\n"}{end}"#,
        &data,
        "pod1\tfoo bar \tfoo bar \npod2\tbaz \tbaz \n",
    );
}

/// `TestFilterPartialMatchesSometimesMissingAnnotations`,
/// `TestRunningPodsJSONPathOutput`.
#[test]
fn filters_tolerate_missing_keys() {
    let data = json!({"items": [
        {"metadata": {"name": "pod1", "annotations": {"color": "blue"}}},
        {"metadata": {"name": "pod2"}},
        {"metadata": {"name": "pod3", "annotations": {"color": "green"}}},
        {"metadata": {"name": "pod4", "annotations": {"color": "blue"}}},
    ]});
    ok(
        r#"{.items[?(@.metadata.annotations.color=="blue")].metadata.name}"#,
        &data,
        "pod1 pod4",
    );
    let pods = json!({"items": [
        {"metadata": {"name": "pod1"}, "status": {"phase": "Running"}},
        {"metadata": {"name": "pod2"}, "status": {"phase": "Running"}},
        {"metadata": {"name": "pod3"}, "status": {"phase": "Running"}},
        {"resourceVersion": ""},
    ]});
    ok(
        r#"{range .items[?(.status.phase=="Running")]}{.metadata.name}{" is Running\n"}{end}"#,
        &pods,
        "pod1 is Running\npod2 is Running\npod3 is Running\n",
    );
}

fn containers(n: usize) -> Value {
    let items: Vec<Value> = (0..n)
        .map(|i| json!({"name": format!("fake{i}")}))
        .collect();
    json!({"spec": {"containers": items}})
}

/// `TestNegativeIndex`.
#[test]
fn negative_indexes() {
    let d = containers(4);
    ok("{.spec.containers[0].name}", &d, "fake0");
    ok("{.spec.containers[0:0].name}", &d, "");
    ok("{.spec.containers[0:-1].name}", &d, "fake0 fake1 fake2");
    eval_err(
        "{.spec.containers[-1:0].name}",
        &d,
        "starting index 3 is greater than ending index 0",
    );
    ok("{.spec.containers[-1].name}", &d, "fake3");
    ok("{.spec.containers[-1:].name}", &d, "fake3");
    ok("{.spec.containers[-2].name}", &d, "fake2");
    ok("{.spec.containers[-2:].name}", &d, "fake2 fake3");
    ok("{.spec.containers[-3].name}", &d, "fake1");
    ok("{.spec.containers[-4].name}", &d, "fake0");
    ok(
        "{.spec.containers[-4:].name}",
        &d,
        "fake0 fake1 fake2 fake3",
    );
    eval_err(
        "{.spec.containers[-5].name}",
        &d,
        "array index out of bounds: index -1, length 4",
    );
    ok("{.spec.containers[5:5].name}", &d, "");
    ok("{.spec.containers[-5:-5].name}", &d, "");
    assert!(execute("{.spec.containers[3:1].name}", &d).is_err());
    assert!(execute("{.spec.containers[-1:-2].name}", &d).is_err());
    eval_err(
        "{.spec.containers[4].name}",
        &d,
        "array index out of bounds: index 4, length 4",
    );
}

/// `TestStep`.
#[test]
fn steps() {
    let d = containers(6);
    let all = "fake0 fake1 fake2 fake3 fake4 fake5";
    ok("{.spec.containers[0:].name}", &d, all);
    ok("{.spec.containers[0:6:].name}", &d, all);
    ok("{.spec.containers[0:6:1].name}", &d, all);
    eval_err("{.spec.containers[0:6:0].name}", &d, "step must be > 0");
    eval_err("{.spec.containers[0:6:-1].name}", &d, "step must be > 0");
    ok("{.spec.containers[1:4:2].name}", &d, "fake1 fake3");
    ok("{.spec.containers[1:4:3].name}", &d, "fake1");
    ok("{.spec.containers[1:4:4].name}", &d, "fake1");
    ok("{.spec.containers[0:6:2].name}", &d, "fake0 fake2 fake4");
    ok("{.spec.containers[0:6:3].name}", &d, "fake0 fake3");
    ok("{.spec.containers[0:6:5].name}", &d, "fake0 fake5");
    ok("{.spec.containers[0:6:6].name}", &d, "fake0");
}

/// `TestParser`: node shapes.
#[test]
fn parser_nodes() {
    let root = |t: &str| JsonPath::parse_template(t).map(|p| p.root);
    let field = |s: &str| Node::Field(s.to_owned());
    let p = |value, known, derived| Param {
        value,
        known,
        derived,
    };
    let unknown = Param::default();
    assert_eq!(
        root("hello jsonpath"),
        Ok(vec![Node::Text("hello jsonpath".into())])
    );
    assert_eq!(
        root("hello {.jsonpath}"),
        Ok(vec![
            Node::Text("hello ".into()),
            Node::List(vec![field("jsonpath")])
        ])
    );
    assert_eq!(
        root("hello {['jsonpath']}"),
        Ok(vec![
            Node::Text("hello ".into()),
            Node::List(vec![field("jsonpath")])
        ])
    );
    assert_eq!(
        root(r#"{"{"}"#),
        Ok(vec![Node::List(vec![Node::Text("{".into())])])
    );
    assert_eq!(
        root("{[1:3]}"),
        Ok(vec![Node::List(vec![Node::Array([
            p(1, true, false),
            p(3, true, false),
            unknown
        ])])])
    );
    assert_eq!(
        root("{.book[*].author}"),
        Ok(vec![Node::List(vec![
            field("book"),
            Node::Array([unknown; 3]),
            field("author")
        ])])
    );
    assert_eq!(
        root("{.bicycle.*}"),
        Ok(vec![Node::List(vec![field("bicycle"), Node::Wildcard])])
    );
    assert_eq!(
        root("{[?(@.price<3)]}"),
        Ok(vec![Node::List(vec![Node::Filter(Box::new(Filter {
            left: vec![field("price")],
            right: vec![Node::Int(3)],
            op: "<".into(),
        }))])])
    );
    assert_eq!(root("{..}"), Ok(vec![Node::List(vec![Node::Recursive])]));
    assert_eq!(
        root("{..price}"),
        Ok(vec![Node::List(vec![Node::Recursive, field("price")])])
    );
    assert_eq!(
        root("{['book.price']}"),
        Ok(vec![Node::List(vec![field("book"), field("price")])])
    );
    assert_eq!(
        root("{['bicycle.price', 3, 'book.price']}"),
        Ok(vec![Node::List(vec![Node::Union(vec![
            vec![field("bicycle"), field("price")],
            vec![Node::Array([p(3, true, false), p(4, true, true), unknown])],
            vec![field("book"), field("price")],
        ])])])
    );
    assert_eq!(
        root("{range .items}{.name},{end}"),
        Ok(vec![
            Node::List(vec![Node::Identifier("range".into()), field("items")]),
            Node::List(vec![field("name")]),
            Node::Text(",".into()),
            Node::List(vec![Node::Identifier("end".into())]),
        ])
    );
    assert!(root(r"{\\\}").is_err());
    let filter_text = |t: &str, left: Vec<Node>, text: &str| {
        assert_eq!(
            root(t),
            Ok(vec![Node::List(vec![Node::Filter(Box::new(Filter {
                left,
                right: vec![Node::Text(text.into())],
                op: "==".into(),
            }))])]),
            "{t}"
        );
    };
    let os = || vec![field("status"), field("nodeInfo"), field("osImage")];
    filter_text(r#"{[?(@.status.nodeInfo.osImage == "()")]}"#, os(), "()");
    filter_text(
        r#"{[?(@.status.nodeInfo.osImage == "(\"\")")]}"#,
        os(),
        "(\"\")",
    );
    filter_text(r#"{[?(@.test == "())(")]}"#, vec![field("test")], "())(");
    filter_text("{[?(@.status.nodeInfo.osImage == 'Linux')]}", os(), "Linux");
    filter_text(
        r#"{[?(@.status.nodeInfo.osImage == "{[()]}")]}"#,
        os(),
        "{[()]}",
    );
    filter_text(r#"{[?(@.status.nodeInfo.osImage == "''")]}"#, os(), "''");
    filter_text(r#"{[?(@.status.nodeInfo.osImage == '""')]}"#, os(), "\"\"");
    filter_text(r"{[?(@.status.nodeInfo.osImage == '\\\'')]}", os(), "\\'");
    assert_eq!(
        root("{[-5:]}"),
        Ok(vec![Node::List(vec![Node::Array([
            p(-5, true, false),
            unknown,
            unknown
        ])])])
    );
    assert_eq!(
        root("{[-1]}"),
        Ok(vec![Node::List(vec![Node::Array([
            p(-1, true, false),
            p(0, true, true),
            unknown
        ])])])
    );
    assert_eq!(
        root("{[1:-1]}"),
        Ok(vec![Node::List(vec![Node::Array([
            p(1, true, false),
            p(-1, true, false),
            unknown
        ])])])
    );
}

/// `TestFailParser`, and more of the parser's messages.
#[test]
fn parser_errors() {
    parse_err("{.hello", "unclosed action");
    parse_err("{*}", "unrecognized character in action: U+002A '*'");
    parse_err("{+12.3.0}", "cannot parse number +12.3.0");
    parse_err("{[1}", "unterminated array");
    parse_err("{[?(.price]}", "unterminated filter");
    parse_err("{........}", "invalid multiple recursive descent");
    parse_err("{[a]}", "invalid array index a");
    parse_err("{[-]}", "array index - is not a number");
    parse_err(
        "{[99999999999999999999]}",
        "array index 99999999999999999999 is not a number",
    );
    parse_err("{\"abc}", "unterminated quoted string");
    parse_err(
        r#"{"a\qb"}"#,
        r#"unquote string "a\qb" error invalid syntax"#,
    );
    parse_err("{[?(@.a==1)x}", "unclosed array expect ]");
    parse_err("{\t}", "unrecognized character in action: U+0009");
    parse_err(r#"{"\é"}"#, r#"unquote string "\é" error invalid syntax"#);
    assert_eq!(
        execute(r#"{"\u00e9\x41\101\t"}"#, &Value::Null).as_deref(),
        Ok("éAA\t")
    );
    assert!(JsonPath::parse(".spec.replicas").is_ok());
    assert!(JsonPath::parse(r".metadata.labels['app\.k8s/x']").is_ok());
    assert!(JsonPath::parse(".status.conditions[?(@.type==\"Ready\")].status").is_ok());
    assert!(JsonPath::parse("").is_ok());
    assert!(JsonPath::parse(".a}b{.c").is_ok());
    assert!(JsonPath::parse(".a{").is_err());
}

/// What CRD printer columns use.
#[test]
fn crd_columns() {
    let obj = json!({
        "metadata": {"name": "x", "labels": {"app.k8s/x": "web", "app": "a"}},
        "spec": {"replicas": 3, "servers": [{"hosts": ["foo"]}, {"hosts": ["bar", "baz"]}]},
        "status": {"conditions": [
            {"type": "Synced", "status": "False"},
            {"type": "Ready", "status": "True"},
        ]},
    });
    let find = |p: &str| -> Vec<Value> {
        JsonPath::parse(p)
            .unwrap()
            .find(&obj)
            .into_iter()
            .map(Cow::into_owned)
            .collect()
    };
    assert_eq!(find(".spec.replicas"), vec![json!(3)]);
    assert_eq!(find(r".metadata.labels['app\.k8s/x']"), vec![json!("web")]);
    assert_eq!(find(r".metadata.labels.app\.k8s/x"), vec![json!("web")]);
    // Without the escape the key splits at the dot.
    assert_eq!(find(".metadata.labels['app.k8s/x']"), Vec::<Value>::new());
    assert_eq!(
        find(r#".status.conditions[?(@.type=="Ready")].status"#),
        vec![json!("True")]
    );
    assert_eq!(
        find(".spec.servers[*].hosts[0]"),
        vec![json!("foo"), json!("bar")]
    );
    assert_eq!(find(".spec.servers[1].hosts[-1]"), vec![json!("baz")]);
    assert_eq!(find(".spec.missing.deeper"), Vec::<Value>::new());
    // An evaluation error reads as no value.
    assert_eq!(find(".spec.replicas[0]"), Vec::<Value>::new());
    assert_eq!(find(".spec.servers[5]"), Vec::<Value>::new());
    // `1 == 1.0` is a comparison between different Go kinds: an error.
    assert!(
        JsonPath::parse(".a[?(@.v==1)]")
            .unwrap()
            .find_results(&json!({"a": [{"v": 1.5}]}))
            .is_err()
    );
}

#[test]
fn shareable_across_threads() {
    fn send_sync<T: Send + Sync + Clone>() {}
    send_sync::<JsonPath>();
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let mut expr = String::from(".a");
    for _ in 0..200 {
        expr = format!("[?({expr})]");
    }
    assert!(JsonPath::parse(&expr).is_err());
    let mut deep = json!(1);
    for _ in 0..10_000 {
        deep = Value::Array(vec![deep]);
    }
    let path = JsonPath::parse("..").unwrap();
    assert_eq!(path.find(&deep).len(), 10_000);
    // Drop the deep value without recursing.
    let mut v = deep;
    while let Value::Array(mut items) = v {
        v = items.pop().unwrap_or(Value::Null);
    }
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z.]{0,4}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,2}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Any text parses or fails cleanly; a parsed path evaluates on any
    /// JSON without panicking.
    #[test]
    fn never_panics(
        expr in prop_oneof![
            r#"[.a-z0-9\[\]\(\)\?@$*:,'"=<>!\\{} é日\u{2028}-]{0,24}"#,
            any::<String>(),
        ],
        obj in arb_json(),
    ) {
        if let Ok(path) = JsonPath::parse(&expr) {
            let _ = path.find_results(&obj);
            let _ = path.find(&obj);
        }
    }

    /// A field path finds what direct indexing finds.
    #[test]
    fn fields_match_indexing(obj in arb_json(), a in "[a-z]{1,2}", b in "[a-z]{1,2}") {
        let path = JsonPath::parse(&format!(".{a}.{b}")).unwrap();
        let want: Vec<Value> = obj.get(&a).and_then(|x| x.get(&b)).cloned().into_iter().collect();
        let got: Vec<Value> = path.find(&obj).into_iter().map(Cow::into_owned).collect();
        prop_assert_eq!(got, want);
    }
}
