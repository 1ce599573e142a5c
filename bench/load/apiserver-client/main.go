// A client that opens connections as kube-apiserver opens them to a webhook: Go's TLS client
// configured as client-go configures it (TLS 1.2 minimum, the webhook's CA, no session cache,
// so every handshake is a full one), HTTP/1.1, one new connection per review. CONNECTIONS
// goroutines post the review for the duration; it prints requests/s, p50 and p99 in ms, and
// the number of requests, and exits 1 when any review was not answered 200. With -cert and -key
// it presents a client certificate, as kube-apiserver does when its admission configuration
// gives it one for the webhook (mTLS).
//
//	go run . -url https://localhost:8443/validate -ca ca.crt -body review.json -c 16 -duration 10s
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "", "the webhook's URL")
	caFile := flag.String("ca", "", "the CA that signed the webhook's certificate (PEM)")
	bodyFile := flag.String("body", "", "the AdmissionReview to post")
	connections := flag.Int("c", 16, "reviews in flight, each on its own connection")
	duration := flag.Duration("duration", 10*time.Second, "how long to post")
	certFile := flag.String("cert", "", "a client certificate to present (PEM; with -key)")
	keyFile := flag.String("key", "", "the client certificate's key (PEM)")
	flag.Parse()
	ca, err := os.ReadFile(*caFile)
	if err != nil {
		log.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		log.Fatalf("%s: no certificate", *caFile)
	}
	body, err := os.ReadFile(*bodyFile)
	if err != nil {
		log.Fatal(err)
	}
	config := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots}
	if *certFile != "" {
		certificate, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			log.Fatal(err)
		}
		config.Certificates = []tls.Certificate{certificate}
	}
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   config,
		DisableKeepAlives: true,
	}}

	deadline := time.Now().Add(*duration)
	latencies := make([][]time.Duration, *connections)
	failures := make([]int, *connections)
	var wg sync.WaitGroup
	for i := range latencies {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				start := time.Now()
				response, err := client.Post(*url, "application/json", bytes.NewReader(body))
				if err != nil {
					failures[i]++
					continue
				}
				_, err = io.Copy(io.Discard, response.Body)
				response.Body.Close()
				if err != nil || response.StatusCode != http.StatusOK {
					failures[i]++
					continue
				}
				latencies[i] = append(latencies[i], time.Since(start))
			}
		}(i)
	}
	wg.Wait()

	var all []time.Duration
	failed := 0
	for i := range latencies {
		all = append(all, latencies[i]...)
		failed += failures[i]
	}
	if len(all) == 0 {
		log.Fatalf("no review answered 200 (%d failed)", failed)
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	ms := func(q float64) float64 { return float64(all[int(q*float64(len(all)-1))]) / 1e6 }
	fmt.Printf("%.0f %.3f %.3f %d\n", float64(len(all))/duration.Seconds(), ms(0.50), ms(0.99), len(all))
	if failed > 0 {
		log.Fatalf("%d reviews not answered 200", failed)
	}
}
