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

{{- define "schedplug.lease" -}}
{{- .Values.leaderElection.resourceName | default .Values.schedulerName -}}
{{- end -}}
