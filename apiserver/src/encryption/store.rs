//! [`EncryptingStore`]: seals values of the configured resources before the
//! backend stores them and opens them on every way out (get, list, the
//! value `delete` returns, watch events and their previous values).

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use skein_storage::{
    Error, KeyValue, ListOptions, ListResult, Result, Revision, Store, WatchMessage, WatchStream,
};

use super::Encryption;

/// The decorator; keys outside the configured resources pass through.
pub struct EncryptingStore {
    inner: Arc<dyn Store>,
    encryption: Arc<Encryption>,
}

impl EncryptingStore {
    /// Wraps `inner`.
    pub fn wrap(inner: Arc<dyn Store>, encryption: Arc<Encryption>) -> Arc<dyn Store> {
        Arc::new(EncryptingStore { inner, encryption })
    }
}

fn transform_error(key: &str, e: &str) -> Error {
    Error::Unavailable(format!("unable to transform key {key:?}: {e}"))
}

/// Seals `value` for `key` if its resource is configured.
fn seal(enc: &Encryption, key: &str, value: &[u8]) -> Result<Option<Vec<u8>>> {
    match enc.chain_for_key(key) {
        Some(chain) => chain
            .seal(key, value)
            .map(Some)
            .map_err(|e| transform_error(key, &e)),
        None => Ok(None),
    }
}

/// Opens one stored pair in place. Empty values (a deletion's event) stay
/// empty.
fn open(enc: &Encryption, kv: &mut KeyValue) -> Result<()> {
    if kv.value.is_empty() {
        return Ok(());
    }
    if let Some(chain) = enc.chain_for_key(&kv.key) {
        let opened = chain
            .open(&kv.key, &kv.value)
            .map_err(|e| transform_error(&kv.key, &e))?;
        kv.value = Bytes::from(opened.data);
    }
    Ok(())
}

#[async_trait]
impl Store for EncryptingStore {
    async fn get(&self, key: &str) -> Result<KeyValue> {
        let mut kv = self.inner.get(key).await?;
        open(&self.encryption, &mut kv)?;
        Ok(kv)
    }

    async fn list(&self, prefix: &str, opts: ListOptions) -> Result<ListResult> {
        let mut page = self.inner.list(prefix, opts).await?;
        for kv in &mut page.items {
            open(&self.encryption, kv)?;
        }
        Ok(page)
    }

    async fn create(&self, key: &str, value: &[u8]) -> Result<KeyValue> {
        let Some(sealed) = seal(&self.encryption, key, value)? else {
            return self.inner.create(key, value).await;
        };
        let mut kv = self.inner.create(key, &sealed).await?;
        kv.value = Bytes::copy_from_slice(value);
        Ok(kv)
    }

    async fn update(
        &self,
        key: &str,
        value: &[u8],
        expected_mod_revision: Revision,
    ) -> Result<KeyValue> {
        let Some(sealed) = seal(&self.encryption, key, value)? else {
            return self.inner.update(key, value, expected_mod_revision).await;
        };
        let mut kv = self
            .inner
            .update(key, &sealed, expected_mod_revision)
            .await?;
        kv.value = Bytes::copy_from_slice(value);
        Ok(kv)
    }

    async fn delete(
        &self,
        key: &str,
        expected_mod_revision: Option<Revision>,
    ) -> Result<(KeyValue, Revision)> {
        let (mut kv, rev) = self.inner.delete(key, expected_mod_revision).await?;
        open(&self.encryption, &mut kv)?;
        Ok((kv, rev))
    }

    async fn watch(&self, prefix: &str, after_revision: Revision) -> Result<WatchStream> {
        let stream = self.inner.watch(prefix, after_revision).await?;
        let enc = self.encryption.clone();
        Ok(Box::pin(stream.map(move |m| match m? {
            WatchMessage::Event(mut ev) => {
                open(&enc, &mut ev.kv)?;
                if let Some(prev) = ev.prev.as_mut() {
                    open(&enc, prev)?;
                }
                Ok(WatchMessage::Event(ev))
            }
            progress => Ok(progress),
        })))
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        self.inner.compact(revision).await
    }

    async fn current_revision(&self) -> Result<Revision> {
        self.inner.current_revision().await
    }

    fn request_progress(&self) -> bool {
        self.inner.request_progress()
    }

    /// Stale when the stored value at `mod_revision` was sealed by another
    /// transformer than the one writes use now.
    async fn needs_rewrite(&self, key: &str, mod_revision: Revision) -> Result<bool> {
        let Some(chain) = self.encryption.chain_for_key(key) else {
            return self.inner.needs_rewrite(key, mod_revision).await;
        };
        let kv = self.inner.get(key).await?;
        if kv.mod_revision != mod_revision {
            return Ok(false);
        }
        let opened = chain
            .open(key, &kv.value)
            .map_err(|e| transform_error(key, &e))?;
        Ok(opened.stale)
    }

    async fn close(&self) {
        self.inner.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encryption::{Algorithm, Provider, Rule};
    use skein_storage::embedded::{EmbeddedOptions, EmbeddedStore};

    fn config(providers: Vec<Provider>) -> Arc<Encryption> {
        Arc::new(
            Encryption::from_rules(&[Rule {
                resources: vec![("".into(), "secrets".into())],
                providers,
            }])
            .expect("rules"),
        )
    }

    fn gcm(name: &str, byte: u8) -> Provider {
        Provider::Keyed(Algorithm::AesGcm, vec![(name.into(), vec![byte; 32])])
    }

    #[tokio::test]
    async fn seals_configured_keys_everywhere_and_rotates() {
        let dir = tempfile::tempdir().expect("tempdir");
        let raw: Arc<dyn Store> =
            EmbeddedStore::open(&dir.path().join("s.redb"), EmbeddedOptions::default())
                .await
                .expect("open");
        let v1 = EncryptingStore::wrap(raw.clone(), config(vec![gcm("k1", 1)]));
        let secret = "/registry/core/secrets/ns/s";
        let cm = "/registry/core/configmaps/ns/c";
        let mut watch = v1.watch("/registry/", 0).await.expect("watch");
        let created = v1.create(secret, b"{\"data\":1}").await.expect("create");
        assert_eq!(created.value.as_ref(), b"{\"data\":1}");
        v1.create(cm, b"plain").await.expect("create cm");

        let stored = raw.get(secret).await.expect("raw");
        assert!(stored.value.starts_with(b"k8s:enc:aesgcm:v1:k1:"));
        assert_eq!(raw.get(cm).await.expect("raw").value.as_ref(), b"plain");
        assert_eq!(
            v1.get(secret).await.expect("get").value.as_ref(),
            b"{\"data\":1}"
        );
        let list = v1
            .list("/registry/", ListOptions::default())
            .await
            .expect("list");
        assert!(
            list.items
                .iter()
                .all(|kv| !kv.value.starts_with(b"k8s:enc:"))
        );
        match watch.next().await {
            Some(Ok(WatchMessage::Event(ev))) => assert_eq!(ev.kv.value.as_ref(), b"{\"data\":1}"),
            other => panic!("unexpected {other:?}"),
        }
        assert!(
            !v1.needs_rewrite(secret, created.mod_revision)
                .await
                .expect("fresh")
        );

        // Rotation: a new first key; the old value reads and is stale.
        let v2 = EncryptingStore::wrap(raw.clone(), config(vec![gcm("k2", 2), gcm("k1", 1)]));
        assert_eq!(
            v2.get(secret).await.expect("get").value.as_ref(),
            b"{\"data\":1}"
        );
        assert!(
            v2.needs_rewrite(secret, created.mod_revision)
                .await
                .expect("stale")
        );
        let rewritten = v2
            .update(secret, b"{\"data\":1}", created.mod_revision)
            .await
            .expect("rewrite");
        assert!(
            raw.get(secret)
                .await
                .expect("raw")
                .value
                .starts_with(b"k8s:enc:aesgcm:v1:k2:")
        );
        assert!(
            !v2.needs_rewrite(secret, rewritten.mod_revision)
                .await
                .expect("fresh")
        );

        // A server that lost the key cannot read the value.
        let lost = EncryptingStore::wrap(raw.clone(), config(vec![gcm("k1", 1)]));
        match lost.get(secret).await {
            Err(Error::Unavailable(m)) => assert_eq!(
                m,
                "unable to transform key \"/registry/core/secrets/ns/s\": no matching prefix found"
            ),
            other => panic!("unexpected {other:?}"),
        }
        let (deleted, _) = v2.delete(secret, None).await.expect("delete");
        assert_eq!(deleted.value.as_ref(), b"{\"data\":1}");
        raw.close().await;
    }
}
