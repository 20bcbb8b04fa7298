//! The value transformers, byte for byte as upstream's
//! (`k8s.io/apiserver/pkg/storage/value/encrypt/{aes,secretbox,identity}`):
//!
//! - `aesgcm`: `k8s:enc:aesgcm:v1:<key>:` + 12-byte random nonce + AES-GCM
//!   ciphertext and tag, the storage key as additional authenticated data
//!   (so a value copied to another key does not decrypt);
//! - `aescbc`: `k8s:enc:aescbc:v1:<key>:` + 16-byte random IV + AES-CBC
//!   ciphertext with PKCS#7 padding;
//! - `secretbox`: `k8s:enc:secretbox:v1:<key>:` + 24-byte random nonce +
//!   NaCl secretbox (tag, then ciphertext);
//! - `identity`: the plaintext, and it refuses to read a `k8s:enc:` value.

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload, rand_core::RngCore};
use aes_gcm::aes::{Aes128, Aes192, Aes256};
use aes_gcm::{AesGcm, Nonce};
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use crypto_secretbox::XSalsa20Poly1305;

use super::config::{Algorithm, Provider};

/// Every encrypted value starts with this.
pub const ENCRYPTED_PREFIX: &[u8] = b"k8s:enc:";

type Gcm<A> = AesGcm<A, aes_gcm::aead::consts::U12>;

enum Cipher {
    Gcm128(Box<Gcm<Aes128>>),
    Gcm192(Box<Gcm<Aes192>>),
    Gcm256(Box<Gcm<Aes256>>),
    Cbc(Vec<u8>),
    Secretbox(Box<XSalsa20Poly1305>),
    Identity,
}

/// One prefixed transformer: a provider's key (or identity, with an empty
/// prefix).
pub struct Transformer {
    prefix: Vec<u8>,
    cipher: Cipher,
}

/// Why a value could not be read or written.
pub type TransformError = String;

impl Transformer {
    /// The transformers of one provider: one per key, in order. Key sizes
    /// were validated by the config.
    pub fn from_provider(p: &Provider) -> Result<Vec<Transformer>, TransformError> {
        match p {
            Provider::Identity => Ok(vec![Transformer {
                prefix: Vec::new(),
                cipher: Cipher::Identity,
            }]),
            Provider::Keyed(alg, keys) => keys
                .iter()
                .map(|(name, key)| {
                    let prefix = format!("k8s:enc:{}:v1:{name}:", alg.name()).into_bytes();
                    let bad = |_| format!("invalid {} key {name:?}", alg.name());
                    let cipher = match (alg, key.len()) {
                        (Algorithm::AesGcm, 16) => {
                            Cipher::Gcm128(Box::new(Gcm::new_from_slice(key).map_err(bad)?))
                        }
                        (Algorithm::AesGcm, 24) => {
                            Cipher::Gcm192(Box::new(Gcm::new_from_slice(key).map_err(bad)?))
                        }
                        (Algorithm::AesGcm, _) => {
                            Cipher::Gcm256(Box::new(Gcm::new_from_slice(key).map_err(bad)?))
                        }
                        (Algorithm::AesCbc, 16 | 24 | 32) => Cipher::Cbc(key.clone()),
                        (Algorithm::AesCbc, _) => {
                            return Err(format!("invalid {} key {name:?}", alg.name()));
                        }
                        (Algorithm::Secretbox, _) => Cipher::Secretbox(Box::new(
                            XSalsa20Poly1305::new_from_slice(key).map_err(bad)?,
                        )),
                    };
                    Ok(Transformer { prefix, cipher })
                })
                .collect(),
        }
    }

    /// The stored prefix (`k8s:enc:aesgcm:v1:key1:`; empty for identity).
    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }

    /// The stored form of `data` under `key`: prefix + ciphertext.
    pub fn seal(&self, key: &str, data: &[u8]) -> Result<Vec<u8>, TransformError> {
        let mut out = self.prefix.clone();
        let gcm_err = |_| "failed to encrypt data".to_string();
        match &self.cipher {
            Cipher::Identity => out.extend_from_slice(data),
            Cipher::Gcm128(c) => gcm_seal(c.as_ref(), key, data, &mut out).map_err(gcm_err)?,
            Cipher::Gcm192(c) => gcm_seal(c.as_ref(), key, data, &mut out).map_err(gcm_err)?,
            Cipher::Gcm256(c) => gcm_seal(c.as_ref(), key, data, &mut out).map_err(gcm_err)?,
            Cipher::Cbc(k) => {
                let mut iv = [0u8; 16];
                OsRng.fill_bytes(&mut iv);
                let ct = match k.len() {
                    16 => cbc_encrypt::<Aes128>(k, &iv, data),
                    24 => cbc_encrypt::<Aes192>(k, &iv, data),
                    _ => cbc_encrypt::<Aes256>(k, &iv, data),
                }?;
                out.extend_from_slice(&iv);
                out.extend_from_slice(&ct);
            }
            Cipher::Secretbox(c) => {
                let nonce = XSalsa20Poly1305::generate_nonce(&mut OsRng);
                let sealed = c
                    .encrypt(&nonce, data)
                    .map_err(|_| "failed to encrypt data".to_string())?;
                out.extend_from_slice(&nonce);
                out.extend_from_slice(&sealed);
            }
        }
        Ok(out)
    }

    /// The plaintext of `data` (which starts with this transformer's
    /// prefix) stored under `key`. Upstream's error texts.
    pub fn open(&self, key: &str, data: &[u8]) -> Result<Vec<u8>, TransformError> {
        let body = data.get(self.prefix.len()..).unwrap_or_default();
        match &self.cipher {
            Cipher::Identity => {
                if data.starts_with(ENCRYPTED_PREFIX) {
                    return Err("identity transformer tried to read encrypted data".into());
                }
                Ok(data.to_vec())
            }
            Cipher::Gcm128(c) => gcm_open(c.as_ref(), key, body),
            Cipher::Gcm192(c) => gcm_open(c.as_ref(), key, body),
            Cipher::Gcm256(c) => gcm_open(c.as_ref(), key, body),
            Cipher::Cbc(k) => {
                if body.len() < 16 {
                    return Err("the stored data was shorter than the required size".into());
                }
                let (iv, ct) = body.split_at(16);
                if ct.len() % 16 != 0 {
                    return Err("the stored data is not a multiple of the block size".into());
                }
                match k.len() {
                    16 => cbc_decrypt::<Aes128>(k, iv, ct),
                    24 => cbc_decrypt::<Aes192>(k, iv, ct),
                    _ => cbc_decrypt::<Aes256>(k, iv, ct),
                }
            }
            Cipher::Secretbox(c) => {
                if body.len() < 24 {
                    return Err("the stored data was shorter than the required size".into());
                }
                let (nonce, sealed) = body.split_at(24);
                c.decrypt(crypto_secretbox::Nonce::from_slice(nonce), sealed)
                    .map_err(|_| "output array too small".to_string())
            }
        }
    }
}

fn gcm_seal<C: Aead + AeadCore>(
    c: &C,
    key: &str,
    data: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), aes_gcm::Error> {
    let nonce = C::generate_nonce(&mut OsRng);
    let ct = c.encrypt(
        &nonce,
        Payload {
            msg: data,
            aad: key.as_bytes(),
        },
    )?;
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&ct);
    Ok(())
}

fn gcm_open<C: Aead<NonceSize = aes_gcm::aead::consts::U12>>(
    c: &C,
    key: &str,
    body: &[u8],
) -> Result<Vec<u8>, TransformError> {
    if body.len() < 12 {
        return Err("the stored data was shorter than the required size".into());
    }
    let (nonce, ct) = body.split_at(12);
    c.decrypt(
        Nonce::from_slice(nonce),
        Payload {
            msg: ct,
            aad: key.as_bytes(),
        },
    )
    .map_err(|_| "cipher: message authentication failed".to_string())
}

fn cbc_encrypt<A>(key: &[u8], iv: &[u8], data: &[u8]) -> Result<Vec<u8>, TransformError>
where
    A: cbc::cipher::BlockCipher + cbc::cipher::BlockEncryptMut + cbc::cipher::KeyInit,
{
    let enc = cbc::Encryptor::<A>::new_from_slices(key, iv)
        .map_err(|_| "failed to encrypt data".to_string())?;
    Ok(enc.encrypt_padded_vec_mut::<Pkcs7>(data))
}

fn cbc_decrypt<A>(key: &[u8], iv: &[u8], ct: &[u8]) -> Result<Vec<u8>, TransformError>
where
    A: cbc::cipher::BlockCipher + cbc::cipher::BlockDecryptMut + cbc::cipher::KeyInit,
{
    let dec = cbc::Decryptor::<A>::new_from_slices(key, iv)
        .map_err(|_| "failed to decrypt data".to_string())?;
    dec.decrypt_padded_vec_mut::<Pkcs7>(ct)
        .map_err(|_| "invalid padding on input".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "/registry/core/secrets/default/s";

    fn one(alg: Algorithm, name: &str, key: Vec<u8>) -> Transformer {
        Transformer::from_provider(&Provider::Keyed(alg, vec![(name.into(), key)]))
            .expect("transformer")
            .pop()
            .expect("one key")
    }

    fn key32() -> Vec<u8> {
        (0u8..32).collect()
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
            .collect()
    }

    #[test]
    fn round_trips_and_wrong_key_fails() {
        for (alg, size) in [
            (Algorithm::AesGcm, 16),
            (Algorithm::AesGcm, 24),
            (Algorithm::AesGcm, 32),
            (Algorithm::AesCbc, 16),
            (Algorithm::AesCbc, 32),
            (Algorithm::Secretbox, 32),
        ] {
            let t = one(alg, "k1", vec![7u8; size]);
            let sealed = t.seal(KEY, b"hello secret").expect("seal");
            let prefix = format!("k8s:enc:{}:v1:k1:", alg.name());
            assert!(sealed.starts_with(prefix.as_bytes()), "{alg:?}");
            assert!(!sealed.windows(6).any(|w| w == b"hello "), "{alg:?}");
            assert_eq!(t.open(KEY, &sealed).expect("open"), b"hello secret");
            let other = one(alg, "k1", vec![8u8; size]);
            assert!(other.open(KEY, &sealed).is_err(), "{alg:?} wrong key");
        }
    }

    #[test]
    fn layouts_match_upstream() {
        let gcm = one(Algorithm::AesGcm, "k", key32());
        let s = gcm.seal(KEY, b"hello secret").expect("seal");
        // prefix + 12 nonce + 12 ciphertext + 16 tag
        assert_eq!(s.len(), b"k8s:enc:aesgcm:v1:k:".len() + 12 + 12 + 16);
        let cbc = one(Algorithm::AesCbc, "k", key32());
        let s = cbc.seal(KEY, b"hello secret").expect("seal");
        // prefix + 16 IV + one padded block
        assert_eq!(s.len(), b"k8s:enc:aescbc:v1:k:".len() + 16 + 16);
        let sb = one(Algorithm::Secretbox, "k", key32());
        let s = sb.seal(KEY, b"hello secret").expect("seal");
        // prefix + 24 nonce + 16 tag + 12 ciphertext
        assert_eq!(s.len(), b"k8s:enc:secretbox:v1:k:".len() + 24 + 16 + 12);
    }

    /// Values produced by an independent AES implementation (Python's
    /// `cryptography`) in upstream's layout decrypt here.
    #[test]
    fn reads_independently_produced_values() {
        let gcm = one(Algorithm::AesGcm, "k", key32());
        let mut stored = b"k8s:enc:aesgcm:v1:k:".to_vec();
        stored.extend(unhex(
            "6465666768696a6b6c6d6e6f207eb20a16c925fb5d103a9c350ef4a0ed291a8629f97ed2c41a090f",
        ));
        assert_eq!(gcm.open(KEY, &stored).expect("gcm"), b"hello secret");
        // The key is authenticated data: another key does not decrypt.
        assert_eq!(
            gcm.open("/registry/core/secrets/default/t", &stored),
            Err("cipher: message authentication failed".to_string())
        );
        let cbc = one(Algorithm::AesCbc, "k", key32());
        let mut stored = b"k8s:enc:aescbc:v1:k:".to_vec();
        stored.extend(unhex(
            "32333435363738393a3b3c3d3e3f4041130bbaae6cfa837450b302aa360539a6",
        ));
        assert_eq!(cbc.open(KEY, &stored).expect("cbc"), b"hello secret");
        stored.pop();
        assert_eq!(
            cbc.open(KEY, &stored),
            Err("the stored data is not a multiple of the block size".to_string())
        );
    }

    #[test]
    fn identity_refuses_encrypted_data() {
        let id = Transformer::from_provider(&Provider::Identity)
            .expect("identity")
            .pop()
            .expect("one");
        assert_eq!(id.seal(KEY, b"x").expect("seal"), b"x");
        assert_eq!(
            id.open(KEY, b"k8s:enc:aesgcm:v1:k:zzz"),
            Err("identity transformer tried to read encrypted data".to_string())
        );
    }
}
