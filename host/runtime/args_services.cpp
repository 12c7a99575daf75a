#include "host/runtime/args_services.hpp"

#include <cstring>
#include <exception>
#include <span>
#include <string_view>

#include "host/runtime/plugin_instance.hpp"

namespace schedplug::host {
namespace {

void set_error(schedplug_reason* error, const std::string& text) {
  if (error == nullptr || error->text == nullptr || error->capacity == 0) {
    return;
  }
  const size_t n = std::min<size_t>(text.size(), error->capacity - 1);
  std::memcpy(error->text, text.data(), n);
  error->text[n] = '\0';
}

const Args* args_of(const schedplug_args* obj) {
  return reinterpret_cast<const Args*>(obj);
}

// Runs `body` (which returns the found value or nullopt) against the
// session and object of a call, turning ArgsError into ERROR.
template <class Body>
schedplug_code run(void* context, const schedplug_args* obj, const char* key,
                   schedplug_reason* error, Body&& body) noexcept {
  try {
    ArgsSession* session =
        context == nullptr
            ? nullptr
            : static_cast<PluginInstance*>(context)->args_session();
    if (session == nullptr) {
      set_error(error,
                "args can only be read during create(); read them there and "
                "keep copies");
      return SCHEDPLUG_ERROR;
    }
    if (obj == nullptr) {
      set_error(error, session->parse_error().empty()
                           ? std::string("no args object given (pass "
                                         "host->args or a nested object)")
                           : session->parse_error());
      return SCHEDPLUG_ERROR;
    }
    if (key == nullptr) {
      set_error(error, "no arg name given (key is NULL)");
      return SCHEDPLUG_ERROR;
    }
    return body(*session, *args_of(obj), std::string_view(key))
               ? SCHEDPLUG_SUCCESS
               : SCHEDPLUG_SKIP;
  } catch (const ArgsError& e) {
    set_error(error, e.what());
  } catch (const std::exception& e) {
    set_error(error, std::string("reading args failed: ") + e.what());
  } catch (...) {
    set_error(error, "reading args failed");
  }
  return SCHEDPLUG_ERROR;
}

schedplug_code args_allow_only(void* context, const schedplug_args* obj,
                               const char* const* known, uint64_t count,
                               schedplug_reason* error) {
  return run(context, obj, "", error,
             [&](ArgsSession&, const Args& args, std::string_view) {
               std::vector<std::string_view> keys;
               for (uint64_t i = 0; i < count; ++i) {
                 if (known[i] != nullptr) keys.emplace_back(known[i]);
               }
               args.allow_only(std::span<const std::string_view>(keys));
               return true;
             }) == SCHEDPLUG_ERROR
             ? SCHEDPLUG_ERROR
             : SCHEDPLUG_SUCCESS;
}

schedplug_code arg_string(void* context, const schedplug_args* obj,
                          const char* key, schedplug_str* out,
                          schedplug_reason* error) {
  return run(context, obj, key, error,
             [&](ArgsSession& s, const Args& args, std::string_view k) {
               auto v = args.find_string(k);
               if (!v.has_value()) return false;
               const std::string& kept = s.keep(*std::move(v));
               *out = {kept.data(), kept.size()};
               return true;
             });
}

schedplug_code arg_bool(void* context, const schedplug_args* obj,
                        const char* key, int32_t* out,
                        schedplug_reason* error) {
  return run(context, obj, key, error,
             [&](ArgsSession&, const Args& args, std::string_view k) {
               auto v = args.find_boolean(k);
               if (!v.has_value()) return false;
               *out = *v ? 1 : 0;
               return true;
             });
}

schedplug_code arg_int(void* context, const schedplug_args* obj,
                       const char* key, int64_t min, int64_t max, int64_t* out,
                       schedplug_reason* error) {
  return run(context, obj, key, error,
             [&](ArgsSession&, const Args& args, std::string_view k) {
               auto v = args.find_integer(k, min, max);
               if (!v.has_value()) return false;
               *out = *v;
               return true;
             });
}

schedplug_code arg_float(void* context, const schedplug_args* obj,
                         const char* key, double min, double max, double* out,
                         schedplug_reason* error) {
  return run(context, obj, key, error,
             [&](ArgsSession&, const Args& args, std::string_view k) {
               auto v = args.find_number(k, min, max);
               if (!v.has_value()) return false;
               *out = *v;
               return true;
             });
}

schedplug_code arg_duration(void* context, const schedplug_args* obj,
                            const char* key, int64_t* out_ns,
                            schedplug_reason* error) {
  return run(context, obj, key, error,
             [&](ArgsSession&, const Args& args, std::string_view k) {
               auto v = args.find_duration(k);
               if (!v.has_value()) return false;
               *out_ns = v->count();
               return true;
             });
}

schedplug_code arg_string_list(void* context, const schedplug_args* obj,
                               const char* key, const schedplug_str** items,
                               uint64_t* count, schedplug_reason* error) {
  return run(context, obj, key, error,
             [&](ArgsSession& s, const Args& args, std::string_view k) {
               auto v = args.find_string_list(k);
               if (!v.has_value()) return false;
               std::vector<schedplug_str> views;
               views.reserve(v->size());
               for (std::string& item : *v) {
                 const std::string& kept = s.keep(std::move(item));
                 views.push_back({kept.data(), kept.size()});
               }
               const auto& list = s.keep(std::move(views));
               *items = list.data();
               *count = list.size();
               return true;
             });
}

schedplug_code arg_object(void* context, const schedplug_args* obj,
                          const char* key, const schedplug_args** out,
                          schedplug_reason* error) {
  return run(context, obj, key, error,
             [&](ArgsSession& s, const Args& args, std::string_view k) {
               auto v = args.find_object(k);
               if (!v.has_value()) return false;
               *out = s.keep(*std::move(v));
               return true;
             });
}

}  // namespace

ArgsSession::ArgsSession(const std::string& args_json) {
  try {
    objects_.push_back(Args::parse(args_json.empty() ? "{}" : args_json));
  } catch (const ArgsError& e) {
    parse_error_ = e.what();
  }
}

const schedplug_args* ArgsSession::root() const {
  if (objects_.empty()) return nullptr;
  return reinterpret_cast<const schedplug_args*>(&objects_.front());
}

void ArgsSession::install(schedplug_host& host, const ArgsSession* session) {
  host.args = session == nullptr ? nullptr : session->root();
  host.args_allow_only = &args_allow_only;
  host.arg_string = &arg_string;
  host.arg_bool = &arg_bool;
  host.arg_int = &arg_int;
  host.arg_float = &arg_float;
  host.arg_duration = &arg_duration;
  host.arg_string_list = &arg_string_list;
  host.arg_object = &arg_object;
}

const schedplug_args* ArgsSession::keep(Args object) {
  objects_.push_back(std::move(object));
  return reinterpret_cast<const schedplug_args*>(&objects_.back());
}

const std::string& ArgsSession::keep(std::string text) {
  strings_.push_back(std::move(text));
  return strings_.back();
}

const std::vector<schedplug_str>& ArgsSession::keep(
    std::vector<schedplug_str> list) {
  lists_.push_back(std::move(list));
  return lists_.back();
}

}  // namespace schedplug::host
