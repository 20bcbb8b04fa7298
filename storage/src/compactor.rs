//! Automatic compaction: keep about `retain` of history, as kube-apiserver does.
