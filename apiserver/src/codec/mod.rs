//! Request body codecs beyond JSON.
