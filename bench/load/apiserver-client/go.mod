module mdadmit.bench/apiserver-client

go 1.19
