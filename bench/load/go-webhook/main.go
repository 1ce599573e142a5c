// A webhook as most are built: Go's net/http and encoding/json, standard library only. It
// decodes the whole AdmissionReview (the object into generic maps, as a webhook that reads
// its fields does), and admits it. The load benchmark runs it beside mdadmit-webhook and
// nginx, with the same certificate, as the reference of a typical webhook's cost.
//
//	go run . -cert tls.crt -key tls.key -listen 127.0.0.1:18445
package main

import (
	"crypto/tls"
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"runtime"
)

type admissionRequest struct {
	UID       string                 `json:"uid"`
	Kind      map[string]string      `json:"kind"`
	Operation string                 `json:"operation"`
	Namespace string                 `json:"namespace"`
	Object    map[string]interface{} `json:"object"`
	OldObject map[string]interface{} `json:"oldObject"`
}

type admissionResponse struct {
	UID     string `json:"uid"`
	Allowed bool   `json:"allowed"`
}

type admissionReview struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Request    *admissionRequest  `json:"request,omitempty"`
	Response   *admissionResponse `json:"response,omitempty"`
}

func validate(w http.ResponseWriter, r *http.Request) {
	var review admissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	spec, _ := review.Request.Object["spec"].(map[string]interface{})
	_, hasRoles := spec["roles"]
	answer := admissionReview{
		APIVersion: review.APIVersion,
		Kind:       "AdmissionReview",
		Response:   &admissionResponse{UID: review.Request.UID, Allowed: hasRoles},
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&answer); err != nil {
		log.Print(err)
	}
}

func main() {
	cert := flag.String("cert", "", "serving certificate (PEM)")
	key := flag.String("key", "", "its private key (PEM)")
	listen := flag.String("listen", "127.0.0.1:18445", "HOST:PORT")
	threads := flag.Int("threads", 0, "GOMAXPROCS (0: one per core)")
	flag.Parse()
	if *threads > 0 {
		runtime.GOMAXPROCS(*threads)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/validate", validate)
	// No session tickets, as mdadmit-webhook and the nginx reference: kube-apiserver never
	// resumes, so every new connection in the benchmark is a full handshake for every server.
	server := &http.Server{
		Addr:    *listen,
		Handler: mux,
		TLSConfig: &tls.Config{
			MinVersion:             tls.VersionTLS12,
			NextProtos:             []string{"http/1.1"},
			SessionTicketsDisabled: true,
		},
	}
	log.Fatal(server.ListenAndServeTLS(*cert, *key))
}
