{{/* The prefix of every object's name: <release>-svc-platform, at most 63 characters as Kubernetes allows. */}}
{{- define "svc.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "svc.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels never change after install; the component label that tells api from worker is added beside them. */}}
{{- define "svc.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "svc.secretName" -}}
{{- if .Values.secrets.create -}}
{{- include "svc.fullname" . -}}
{{- else -}}
{{- .Values.secrets.existingSecret -}}
{{- end -}}
{{- end -}}

{{/* SVC_DATA_DIR of every pod: one ReadWriteMany claim shared by api and worker, or an emptyDir per pod. */}}
{{- define "svc.dataVolume" -}}
- name: data
{{- if .Values.persistence.enabled }}
  persistentVolumeClaim:
{{- if .Values.persistence.existingClaim }}
    claimName: {{ .Values.persistence.existingClaim }}
{{- else }}
    claimName: {{ include "svc.fullname" . }}-data
{{- end }}
{{- else }}
  emptyDir: {}
{{- end }}
{{- end -}}

{{/* Every path of an Ingress host goes to the api Service. */}}
{{- define "svc.apiPaths" -}}
paths:
  - path: /
    pathType: Prefix
    backend:
      service:
        name: {{ include "svc.fullname" . }}-api
        port:
          name: http
{{- end -}}
