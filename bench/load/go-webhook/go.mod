module mdadmit.bench/go-webhook

go 1.19
