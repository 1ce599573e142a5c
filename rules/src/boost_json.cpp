// Boost.JSON compiled here, with the project's flags, instead of linked from libboost_json.so:
// the review's parse then inlines into the decoder and, in a profile-guided build, is laid out
// by the profile like the rest of the request path (bench/RESULTS.md).
#include <boost/json/src.hpp>
