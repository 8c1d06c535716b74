// The streaming-list rules against kube-apiserver's: ValidateListOptions' 422s (apimachinery
// v0.27-v0.36, text identical in each), the end bookmark's annotation and its shape.
#include "kube/watch_list.h"

#include <gtest/gtest.h>

#include "kube/request_info.h"

namespace yurthub::kube {
namespace {

RequestInfo get(const std::string& target) {
  return classify_request("GET", target, "kubelet/v1.35.0 (linux/amd64) kubernetes/abc");
}

TEST(WatchList, RecognisesTheReflectorsStreamingList) {
  // client-go v0.35's first request of a pod informer (reflector.go watchList, keys sorted).
  const auto info =
      get("/api/v1/pods?allowWatchBookmarks=true&fieldSelector=spec.nodeName%3Dn1&"
          "resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeout=7m17s&"
          "timeoutSeconds=437&watch=true");
  EXPECT_TRUE(is_streaming_list(info));
  EXPECT_EQ(invalid_list_options(info), std::nullopt);
  EXPECT_FALSE(is_streaming_list(get("/api/v1/pods?watch=true&resourceVersion=5")));
  EXPECT_FALSE(is_streaming_list(
      get("/api/v1/pods?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan")));
  EXPECT_FALSE(is_streaming_list(get("/api/v1/pods?sendInitialEvents=true")));  // a list
}

struct Case {
  const char* target;
  const char* message;  // "" when valid
};

class ListOptionsValidation : public testing::TestWithParam<Case> {};

TEST_P(ListOptionsValidation, AnswersAsTheApiserver) {
  const auto error = invalid_list_options(get(GetParam().target));
  if (std::string(GetParam().message).empty()) {
    EXPECT_EQ(error, std::nullopt) << error->message;
    return;
  }
  ASSERT_NE(error, std::nullopt);
  EXPECT_EQ(error->code, 422u);
  EXPECT_EQ(error->reason, "Invalid");
  EXPECT_EQ(error->message, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Apimachinery, ListOptionsValidation,
    testing::Values(
        Case{"/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
             ""},
        Case{"/api/v1/pods?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&"
             "resourceVersion=10",
             ""},
        Case{"/api/v1/pods?watch=true&allowWatchBookmarks=true", ""},
        Case{"/api/v1/pods?watch=true&sendInitialEvents=true",
             "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
             "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"},
        Case{"/api/v1/pods?watch=true&resourceVersionMatch=NotOlderThan",
             "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
             "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"},
        Case{"/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=Exact",
             "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: "
             "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, "
             "resourceVersionMatch: Unsupported value: \"Exact\": supported values: "
             "\"NotOlderThan\"]"},
        Case{"/api/v1/pods?sendInitialEvents=true",
             "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: "
             "sendInitialEvents is forbidden for list"},
        Case{"/api/v1/pods?resourceVersionMatch=NotOlderThan",
             "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
             "resourceVersionMatch is forbidden unless resourceVersion is provided"},
        Case{"/api/v1/pods?resourceVersionMatch=Exact&resourceVersion=0",
             "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
             "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""},
        Case{"/api/v1/pods?resourceVersionMatch=NotOlderThan&resourceVersion=0&limit=500", ""}));

TEST(WatchList, TheInvalidStatusHasTheApiserversCauses) {
  const auto error = invalid_list_options(get("/api/v1/pods?watch=true&sendInitialEvents=true"));
  ASSERT_NE(error, std::nullopt);
  EXPECT_EQ(status_body(*error),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
            R"("ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: )"
            R"(sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",)"
            R"("reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions",)"
            R"("causes":[{"reason":"FieldValueForbidden","message":"Forbidden: )"
            R"(sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",)"
            R"("field":"resourceVersionMatch"}]},"code":422})");
}

TEST(WatchList, FindsTheEndAnnotationOnlyWhereItIs) {
  // A 1.34+ apiserver's bookmark (cacher.go setInitialEventsEndBookmarkIfRequested), and a 1.33's.
  EXPECT_TRUE(marks_initial_events_end(
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"656063322",)"
      R"("annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null},)"
      R"("status":{}})"));
  EXPECT_TRUE(
      marks_initial_events_end(R"({"metadata":{"resourceVersion":"7","creationTimestamp":null,)"
                               R"("annotations":{"k8s.io/initial-events-end":"true"}}})"));
  // A periodic bookmark, a false mark, the name in a label or a string elsewhere.
  EXPECT_FALSE(marks_initial_events_end(R"({"metadata":{"resourceVersion":"7"}})"));
  EXPECT_FALSE(marks_initial_events_end(
      R"({"metadata":{"annotations":{"k8s.io/initial-events-end":"false"}}})"));
  EXPECT_FALSE(
      marks_initial_events_end(R"({"metadata":{"labels":{"k8s.io/initial-events-end":"true"}}})"));
  EXPECT_FALSE(marks_initial_events_end(R"({"data":{"k8s.io/initial-events-end":"true"}})"));
  EXPECT_FALSE(marks_initial_events_end(R"({"metadata":{"annotations":{"k8s.io/initial-ev)"));
}

TEST(WatchList, BuildsTheEndBookmarkItRecognises) {
  const std::string line = initial_events_end_bookmark("Pod", "v1", 42);
  EXPECT_EQ(line, R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":)"
                  R"({"resourceVersion":"42","annotations":{"k8s.io/initial-events-end":"true"}}}})"
                  "\n");
  const std::string object = line.substr(28, line.size() - 28 - 2);
  EXPECT_TRUE(marks_initial_events_end(object)) << object;
}

}  // namespace
}  // namespace yurthub::kube
