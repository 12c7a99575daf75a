{{- define "schedplug.fullname" -}}
{{- .Values.schedulerName | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "schedplug.labels" -}}
app.kubernetes.io/name: schedplug-scheduler
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "schedplug.selector" -}}
app.kubernetes.io/name: schedplug-scheduler
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "schedplug.image" -}}
{{- if .digest -}}
{{ .repository }}@{{ .digest }}
{{- else -}}
{{ .repository }}:{{ .tag }}
{{- end -}}
{{- end -}}

{{/* kube-scheduler's image: pinned by a tag or digest, else the one built
for the cluster's Kubernetes minor. */}}
{{- define "schedplug.schedulerImage" -}}
{{- $img := .Values.images.scheduler -}}
{{- if or $img.tag $img.digest -}}
{{ include "schedplug.image" $img }}
{{- else -}}
{{- $kube := .Capabilities.KubeVersion -}}
{{- $minor := printf "%s.%s" $kube.Major ($kube.Minor | trimSuffix "+") -}}
{{- $tag := get ($img.byMinor | default dict) $minor -}}
{{- if not $tag -}}
{{- fail (printf "schedplug has no kube-scheduler for Kubernetes %s (the cluster runs %s); the supported minors are %s. Use a cluster of one of them, or pin images.scheduler.tag (or digest) to a kube-scheduler you built for %s." $minor $kube.Version (keys ($img.byMinor | default dict) | sortAlpha | join ", ") $minor) -}}
{{- end -}}
{{ $img.repository }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{- define "schedplug.lease" -}}
{{- .Values.leaderElection.resourceName | default .Values.schedulerName -}}
{{- end -}}
