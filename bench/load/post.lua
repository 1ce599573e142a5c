-- POSTs one AdmissionReview (the file named by MDADMIT_BODY) to /validate, as kube-apiserver does.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local file = assert(io.open(os.getenv("MDADMIT_BODY"), "rb"))
wrk.body = file:read("*a")
file:close()
wrk.path = "/validate?timeout=10s&case=" .. os.getenv("MDADMIT_CASE")
