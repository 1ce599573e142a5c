-- POSTs one AdmissionReview (the file named by MDADMIT_BODY) to /validate, as kube-apiserver
-- does; with MDADMIT_CLOSE=1 on a new TLS connection each time (Connection: close).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
if os.getenv("MDADMIT_CLOSE") == "1" then
    wrk.headers["Connection"] = "close"
end
local file = assert(io.open(os.getenv("MDADMIT_BODY"), "rb"))
wrk.body = file:read("*a")
file:close()
wrk.path = "/validate?timeout=10s&case=" .. os.getenv("MDADMIT_CASE")
