{{/*
Helpers shared by the templates.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "skein.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The base name of every object: fullnameOverride, else the release name
when it already contains the chart name, else <release>-<chart>.
*/}}
{{- define "skein.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* <name>-<version> for the helm.sh/chart label. */}}
{{- define "skein.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "skein.labels" -}}
helm.sh/chart: {{ include "skein.chart" . }}
{{ include "skein.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: apiserver
app.kubernetes.io/part-of: skein
{{- end }}

{{/* The labels that select the Pods (never change them after install). */}}
{{- define "skein.selectorLabels" -}}
app.kubernetes.io/name: {{ include "skein.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The ServiceAccount the Pods run as. */}}
{{- define "skein.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "skein.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The storage backend, checked: etcd or embedded. */}}
{{- define "skein.storage" -}}
{{- $s := .Values.storage | toString }}
{{- if not (has $s (list "etcd" "embedded")) }}
{{- fail (printf "storage must be \"etcd\" or \"embedded\", not %q" $s) }}
{{- end }}
{{- $s }}
{{- end }}

{{/*
The replica count: replicas when set, else 2 on etcd and 1 embedded. The
embedded store is one file on one volume, so it allows one replica only.
*/}}
{{- define "skein.replicas" -}}
{{- $storage := include "skein.storage" . }}
{{- if eq $storage "embedded" }}
{{- if and (not (kindIs "invalid" .Values.replicas)) (gt (int .Values.replicas) 1) }}
{{- fail (printf "replicas: %v, but storage: embedded runs one replica (its store is a file on one volume); use storage: etcd for more" .Values.replicas) }}
{{- end }}
{{- 1 }}
{{- else if kindIs "invalid" .Values.replicas }}
{{- 2 }}
{{- else }}
{{- int .Values.replicas }}
{{- end }}
{{- end }}

{{/* The container image reference. */}}
{{- define "skein.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* The Secret holding the serving certificate (tls.crt, tls.key, ca.crt). */}}
{{- define "skein.servingSecretName" -}}
{{- .Values.tls.existingSecret | default (printf "%s-serving-cert" (include "skein.fullname" .)) }}
{{- end }}

{{/* The Secret holding the ServiceAccount token signing key (sa.key). */}}
{{- define "skein.saKeySecretName" -}}
{{- .Values.serviceAccountTokens.existingSecret | default (printf "%s-service-account-key" (include "skein.fullname" .)) }}
{{- end }}

{{/* The Secret holding the EncryptionConfiguration (encryption-config.yaml). */}}
{{- define "skein.encryptionSecretName" -}}
{{- .Values.encryption.existingSecret | default (printf "%s-encryption-config" (include "skein.fullname" .)) }}
{{- end }}

{{/* The Service's DNS names, which the serving certificate covers. */}}
{{- define "skein.serviceDNSNames" -}}
{{- $svc := include "skein.fullname" . }}
{{- $ns := .Release.Namespace }}
{{- $names := list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.%s" $svc $ns .Values.clusterDomain) }}
{{- concat $names .Values.tls.extraDNSNames | toJson }}
{{- end }}

{{/* The data directory inside the container. */}}
{{- define "skein.dataDir" -}}/var/lib/skein{{- end }}

{{/*
A new ECDSA P-256 private key as PKCS#8 PEM ("BEGIN PRIVATE KEY"), the form
--service-account-signing-key-file takes. genPrivateKey "ecdsa" writes
SEC1 ("BEGIN EC PRIVATE KEY"): its DER (always 121 bytes for P-256) is
wrapped in the PKCS#8 PrivateKeyInfo header for id-ecPublicKey/prime256v1
(RFC 5208, RFC 5915), which is the same 29 bytes for every such key.
*/}}
{{- define "skein.genPKCS8ECKey" -}}
{{- $sec1 := regexReplaceAll "-----[A-Z ]+-----|\\s" (genPrivateKey "ecdsa") "" | b64dec }}
{{- if ne (len $sec1) 121 }}
{{- fail (printf "genPrivateKey \"ecdsa\" returned a %d-byte key, not a 121-byte P-256 SEC1 key" (len $sec1)) }}
{{- end }}
{{- $der := print (b64dec "MIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHk=") $sec1 }}
{{- printf "-----BEGIN PRIVATE KEY-----\n%s\n-----END PRIVATE KEY-----\n" (regexFindAll ".{1,64}" (b64enc $der) -1 | join "\n") }}
{{- end }}
