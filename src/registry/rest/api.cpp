#include "registry/rest/api.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <map>

#include <nlohmann/json.hpp>

namespace oxbow::registry::rest {

namespace {

using Json = nlohmann::ordered_json;
using Segments = std::vector<std::string>;

constexpr const char* kV1 = "application/vnd.schemaregistry.v1+json";

// Confluent's preferred response types, in its order of preference; its default without Accept.
std::string response_type(const std::string& accept) {
  for (const char* type : {kV1, "application/vnd.schemaregistry+json", "application/json"})
    if (accept.find(type) != std::string::npos) return type;
  return kV1;
}

struct Query {
  std::map<std::string, std::string> params;
  bool flag(const std::string& name) const {
    auto it = params.find(name);
    if (it == params.end()) return false;
    std::string v = it->second;
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
    return v == "true";
  }
};

Query parse_query(const std::string& query) {
  Query q;
  size_t start = 0;
  while (start <= query.size() && !query.empty()) {
    size_t amp = query.find('&', start);
    std::string pair =
        query.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
    auto eq = pair.find('=');
    if (!pair.empty())
      q.params[percent_decode(pair.substr(0, eq))] =
          eq == std::string::npos ? "" : percent_decode(pair.substr(eq + 1));
    if (amp == std::string::npos) break;
    start = amp + 1;
  }
  return q;
}

Segments split_path(const std::string& path) {
  Segments out;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    std::string part =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (!part.empty()) out.push_back(percent_decode(part));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

class Exchange {
 public:
  Exchange(RegistryService& service, const http::Request& request)
      : service_(service), request_(request), type_(response_type(request.accept)) {}

  http::Response route() {
    const Segments s = split_path(request_.path);
    query_ = parse_query(request_.query);
    const std::string& m = request_.method;
    if (s.empty()) return m == "GET" || m == "POST" ? body(Json::object()) : not_allowed();
    if (s[0] == "subjects") return subjects(s, m);
    if (s[0] == "schemas") return schemas(s, m);
    if (s[0] == "config") return config(s, m);
    if (s[0] == "mode") return mode(s, m);
    if (s.size() == 3 && s[0] == "v1" && s[1] == "metadata" && s[2] == "id") {
      if (m != "GET") return not_allowed();
      Json clusters{{"kafka-cluster", service_.kafka_cluster_id()},
                    {"schema-registry-cluster", "schema-registry"}};
      return body(Json{{"scope", Json{{"path", Json::array()}, {"clusters", clusters}}}});
    }
    if (s[0] == "compatibility" && s.size() >= 4 && s.size() <= 5 && s[1] == "subjects" &&
        s[3] == "versions")
      return m == "POST" ? compatibility(s) : not_allowed();
    return not_found();
  }

 private:
  http::Response subjects(const Segments& s, const std::string& m) {
    bool deleted = query_.flag("deleted");
    if (s.size() == 1) {
      if (m != "GET") return not_allowed();
      Json out = Json::array();
      std::string prefix =
          query_.params.count("subjectPrefix") ? query_.params["subjectPrefix"] : "";
      for (const auto& name : service_.subjects(deleted, query_.flag("deletedOnly")))
        if (name.rfind(prefix, 0) == 0) out.push_back(name);
      return body(out);
    }
    const std::string& subject = s[1];
    if (s.size() == 2) {
      if (m == "POST") {
        auto request = schema_request();
        if (!request) return *bad_body_;
        return version_body(service_.lookup(subject, *request, deleted));
      }
      if (m == "DELETE") return list(service_.delete_subject(subject, query_.flag("permanent")));
      return not_allowed();
    }
    if (s[2] != "versions" || s.size() > 5) return not_found();
    if (s.size() == 3) {
      if (m == "GET") return list(service_.versions(subject, deleted, query_.flag("deletedOnly")));
      if (m != "POST") return not_allowed();
      auto request = schema_request();
      if (!request) return *bad_body_;
      auto id = service_.register_schema(subject, *request);
      if (!id) return error(*id.error);
      return body(Json{{"id", *id.value}});
    }
    const std::string& version = s[3];
    if (s.size() == 5 && s[4] == "referencedby") {
      if (m != "GET") return not_allowed();
      return list(service_.referenced_by(subject, version));
    }
    if (s.size() == 5) {
      if (s[4] != "schema") return not_found();
      if (m != "GET") return not_allowed();
      auto v = service_.version(subject, version, deleted);
      if (!v) return error(*v.error);
      return {200, type_, schema_text(*v.value)};
    }
    if (m == "GET") return version_body(service_.version(subject, version, deleted));
    if (m == "DELETE") {
      auto deleted_version = service_.delete_version(subject, version, query_.flag("permanent"));
      if (!deleted_version) return error(*deleted_version.error);
      return body(Json(*deleted_version.value));
    }
    return not_allowed();
  }

  http::Response schemas(const Segments& s, const std::string& m) {
    if (s.size() == 2 && s[1] == "types") {
      if (m != "GET") return not_allowed();
      return body(Json(schema_types()));
    }
    if (s.size() == 1) {
      if (m != "GET") return not_allowed();
      return schema_list();
    }
    if (s.size() < 3 || s.size() > 4 || s[1] != "ids") return not_found();
    int id = 0;
    auto [ptr, ec] = std::from_chars(s[2].data(), s[2].data() + s[2].size(), id);
    if (ec != std::errc() || ptr != s[2].data() + s[2].size()) return not_found();
    if (m != "GET") return not_allowed();
    if (s.size() == 4 && (s[3] == "subjects" || s[3] == "versions")) {
      auto holders = service_.holders(id, query_.flag("deleted"));
      if (!holders) return error(*holders.error);
      Json out = Json::array();
      for (const auto& [subject, version] : *holders.value) {
        if (s[3] == "subjects") {
          if (out.empty() || out.back() != subject) out.push_back(subject);
        } else {
          out.push_back(Json{{"subject", subject}, {"version", version}});
        }
      }
      return body(out);
    }
    auto found = service_.schema_by_id(id);
    if (!found) return error(*found.error);
    if (s.size() == 4) {
      if (s[3] != "schema") return not_found();
      return {200, type_, schema_text(*found.value)};
    }
    Json out;
    if (found.value->schema_type != "AVRO") out["schemaType"] = found.value->schema_type;
    out["schema"] = schema_text(*found.value);
    if (!found.value->references.empty()) out["references"] = references(found.value->references);
    return body(out);
  }

  http::Response config(const Segments& s, const std::string& m) {
    if (s.size() > 2) return not_found();
    std::optional<std::string> subject;
    if (s.size() == 2) subject = s[1];
    if (m == "GET") {
      bool to_global = query_.flag("defaultToGlobal");
      auto level = service_.compatibility(subject, to_global);
      if (!level) return error(*level.error);
      Json out{{"compatibilityLevel", *level.value}};
      if (auto normalize = service_.normalize_setting(subject, to_global || !subject))
        out["normalize"] = *normalize;
      return body(out);
    }
    if (m == "DELETE") {
      auto level = service_.delete_compatibility(subject);
      if (!level) return error(*level.error);
      return body(Json{{"compatibilityLevel", *level.value}});
    }
    if (m != "PUT") return not_allowed();
    auto json = request_json();
    if (!json) return *bad_body_;
    // Either setting may come alone; the answer echoes what was set.
    std::optional<std::string> level;
    std::optional<bool> normalize;
    if (auto c = json->find("compatibility"); c != json->end() && !c->is_null())
      level = c->is_string() ? c->get<std::string>() : std::string("?");
    if (auto n = json->find("normalize"); n != json->end() && n->is_boolean())
      normalize = n->get<bool>();
    auto set = service_.set_compatibility(subject, level, normalize);
    if (!set) return error(*set.error);
    Json out = Json::object();
    if (level) out["compatibility"] = *set.value;
    if (normalize) out["normalize"] = *normalize;
    return body(out);
  }

  http::Response mode(const Segments& s, const std::string& m) {
    if (s.size() > 2) return not_found();
    std::optional<std::string> subject;
    if (s.size() == 2) subject = s[1];
    Result<std::string> result = std::string();
    if (m == "GET") {
      result = service_.mode(subject, query_.flag("defaultToGlobal"));
    } else if (m == "DELETE") {
      result = service_.delete_mode(subject);
    } else if (m == "PUT") {
      auto json = request_json();
      if (!json) return *bad_body_;
      auto mode = json->find("mode");
      result = service_.set_mode(
          subject, mode != json->end() && mode->is_string() ? mode->get<std::string>() : "",
          query_.flag("force"));
    } else {
      return not_allowed();
    }
    if (!result) return error(*result.error);
    return body(Json{{"mode", *result.value}});
  }

  http::Response schema_list() {
    std::string prefix = query_.params.count("subjectPrefix") ? query_.params["subjectPrefix"] : "";
    auto all = service_.schemas(prefix, query_.flag("deleted"), query_.flag("latestOnly"));
    auto number = [&](const char* name, long fallback) {
      auto it = query_.params.find(name);
      if (it == query_.params.end()) return fallback;
      try {
        return std::stol(it->second);
      } catch (const std::exception&) {
        return fallback;
      }
    };
    long offset = std::max(0L, number("offset", 0));
    long limit = number("limit", -1);
    Json out = Json::array();
    for (size_t i = static_cast<size_t>(offset); i < all.size(); ++i) {
      if (limit >= 0 && static_cast<long>(out.size()) >= limit) break;
      out.push_back(version_json(all[i]));
    }
    return body(out);
  }

  http::Response compatibility(const Segments& s) {
    auto request = schema_request();
    if (!request) return *bad_body_;
    std::optional<std::string> version;
    if (s.size() == 5) version = s[4];
    auto problems = service_.test_compatibility(s[2], version, *request);
    bool verbose = query_.flag("verbose");
    if (!problems) {
      if (verbose && problems.error->error_code == 42201)
        return body(
            Json{{"is_compatible", false}, {"messages", Json::array({problems.error->message})}});
      return error(*problems.error);
    }
    Json out{{"is_compatible", problems.value->empty()}};
    if (verbose) out["messages"] = Json(*problems.value);
    return body(out);
  }

  // The body as JSON, or (bad_body_ set) Confluent's answer to a body that is not.
  std::optional<Json> request_json() {
    if (request_.body.empty()) {
      bad_body_ = error({422, 422, "request body may not be null"});
      return std::nullopt;
    }
    Json j = Json::parse(request_.body, nullptr, false);
    if (j.is_discarded()) {
      bad_body_ = error({400, 400, "Unexpected character in the request body: not valid JSON"});
      return std::nullopt;
    }
    if (!j.is_object()) {
      bad_body_ = error({400, 400,
                         "Cannot deserialize the request body from " + std::string(j.type_name()) +
                             ": an object is expected"});
      return std::nullopt;
    }
    return j;
  }

  std::optional<SchemaRequest> schema_request() {
    auto j = request_json();
    if (!j) return std::nullopt;
    SchemaRequest r;
    auto field = [&](const char* name) -> std::string {
      auto it = j->find(name);
      return it != j->end() && it->is_string() ? it->get<std::string>() : "";
    };
    r.schema = field("schema");
    r.schema_type = field("schemaType");
    if (r.schema.empty()) {
      bad_body_ = error({422, 42201, "Empty schema"});
      return std::nullopt;
    }
    for (auto [name, target] : {std::pair{"id", &r.id}, std::pair{"version", &r.version}})
      if (auto it = j->find(name); it != j->end() && !it->is_null()) {
        if (!it->is_number_integer() || *it > INT32_MAX || *it < INT32_MIN) {
          bad_body_ = error({422, 42201, std::string("Invalid ") + name + ": " + it->dump()});
          return std::nullopt;
        }
        // Confluent's clients send -1 (and a version of 0) for none.
        int value = it->get<int>();
        if (value >= (std::string(name) == "id" ? 0 : 1)) *target = value;
      }
    r.normalize = query_.flag("normalize");
    if (auto refs = j->find("references"); refs != j->end() && refs->is_array()) {
      for (const auto& ref : *refs) {
        if (!ref.is_object() || !ref.contains("name") || !ref.contains("subject") ||
            !ref.contains("version") || !ref["name"].is_string() || !ref["subject"].is_string() ||
            !ref["version"].is_number_integer()) {
          bad_body_ = error({422, 42201, "Invalid schema reference: " + ref.dump()});
          return std::nullopt;
        }
        r.references.push_back({ref["name"].get<std::string>(), ref["subject"].get<std::string>(),
                                ref["version"].get<int>()});
      }
    }
    return r;
  }

  static Json references(const std::vector<store::SchemaReference>& refs) {
    Json out = Json::array();
    for (const auto& r : refs)
      out.push_back(Json{{"name", r.name}, {"subject", r.subject}, {"version", r.version}});
    return out;
  }

  Json version_json(const store::SchemaValue& v) const {
    Json out;
    out["subject"] = v.subject;
    out["version"] = v.version;
    out["id"] = v.id;
    if (v.schema_type != "AVRO") out["schemaType"] = v.schema_type;
    if (!v.references.empty()) out["references"] = references(v.references);
    out["schema"] = schema_text(v);
    return out;
  }

  // The stored text, or with ?format= the form Confluent gives for it (see ParsedSchema).
  std::string schema_text(const store::SchemaValue& v) const {
    auto it = query_.params.find("format");
    if (it == query_.params.end() || it->second.empty() || it->second == "default") return v.schema;
    return service_.formatted(v, it->second);
  }

  http::Response version_body(const Result<store::SchemaValue>& v) {
    if (!v) return error(*v.error);
    return body(version_json(*v.value));
  }

  template <class T>
  http::Response list(const Result<std::vector<T>>& r) {
    if (!r) return error(*r.error);
    return body(Json(*r.value));
  }

  http::Response body(const Json& j) { return {200, type_, j.dump()}; }
  http::Response error(const RegistryError& e) {
    Json j;
    j["error_code"] = e.error_code;
    j["message"] = e.message;
    return {e.http_status, type_, j.dump()};
  }
  http::Response not_found() { return error({404, 404, "HTTP 404 Not Found"}); }
  http::Response not_allowed() { return error({405, 405, "HTTP 405 Method Not Allowed"}); }

  RegistryService& service_;
  const http::Request& request_;
  std::string type_;
  Query query_;
  std::optional<http::Response> bad_body_;
};

}  // namespace

std::string percent_decode(std::string_view segment) {
  std::string out;
  for (size_t i = 0; i < segment.size(); ++i) {
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (segment[i] == '%' && i + 2 < segment.size() && hex(segment[i + 1]) >= 0 &&
        hex(segment[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(segment[i + 1]) * 16 + hex(segment[i + 2])));
      i += 2;
    } else {
      out.push_back(segment[i]);
    }
  }
  return out;
}

http::Response Api::handle(const http::Request& request) {
  return Exchange(service_, request).route();
}

}  // namespace oxbow::registry::rest
