// Section 4 of the rules contract: the operator's own admission of role shapes.
#include <algorithm>
#include <array>
#include <map>
#include <memory_resource>

#include "rule_context.hpp"
#include "text_syntax.hpp"

namespace mdadmit::rules {

namespace {

constexpr std::int64_t max_replicas = 1024;

void role_kinds(const RuleContext& ctx, FindingSink& sink) {
    const RoleFacts* server = ctx.facts.first_of_kind(RoleKind::server);
    for (const auto& role : ctx.facts.roles) {
        const RoleKind kind = role.role->kind;
        if (kind == RoleKind::server || kind == RoleKind::unknown) {
            continue;
        }
        if (server != nullptr) {
            sink.report(
                RuleId::role_kinds, role.path() + ".kind",
                "Server role " + code(server->role->name) + " cannot be combined with " +
                    std::string(to_string(kind)) + " role " + code(role.role->name),
                "serve either with Server roles, or with Prefill and Decode (and Encode) roles");
            return;
        }
        // A second Encode role is encode-shape's to report.
        const RoleFacts* first = ctx.facts.first_of_kind(kind);
        if (kind != RoleKind::encode && first != &role) {
            sink.report(
                RuleId::role_kinds, role.path() + ".kind",
                std::string(to_string(kind)) + " may appear once; roles " +
                    code(first->role->name) + " and " + code(role.role->name) + " are both " +
                    std::string(to_string(kind)),
                "keep one " + std::string(to_string(kind)) + " role and scale it with replicas");
        }
    }
}

void role_names(const RuleContext& ctx, FindingSink& sink) {
    const std::string_view md = ctx.model.name;
    // Service name -> whose it is: a role's name, or what else it serves. Collisions are only
    // put into words when a finding reports them.
    struct Owner {
        std::string_view role_name;
        const char* other = nullptr;
    };
    std::pmr::map<std::pmr::string, Owner, std::less<>> services(ctx.memory);
    std::pmr::string service(ctx.memory);
    if (!md.empty()) {
        services.emplace(md, Owner{{}, "the deployment Service"});
        if (ctx.model.router) {
            service.assign(md).append("-router");
            services.emplace(service, Owner{{}, "the router Service"});
        }
    }
    const auto describe = [](const Owner& owner) {
        return owner.other == nullptr ? "the Service of role " + code(owner.role_name)
                                      : std::string(owner.other);
    };
    std::pmr::map<std::string_view, std::size_t> seen(ctx.memory);
    for (const auto& role : ctx.facts.roles) {
        const std::string_view name = role.role->name;
        if (name.empty()) {
            continue;  // the structural check reports a missing name
        }
        if (const auto [it, fresh] = seen.emplace(name, role.role->index); !fresh) {
            sink.report(RuleId::role_names, role.path() + ".name",
                        "role name " + code(name) + " is also spec.roles[" +
                            std::to_string(it->second) + "].name",
                        "give every role its own name");
            continue;
        }
        if (md.empty()) {
            continue;  // a generated name is not known yet
        }
        service.assign(md).append("-").append(name);
        // A stored role keeps its Service name: the operator judges only the names it adds.
        if (ctx.stored(name) == nullptr && !is_dns1035_label(service)) {
            sink.report(RuleId::role_names, role.path() + ".name",
                        "Service name " + code(service) +
                            " is not a DNS-1035 label (at most 63 lower-case letters, digits and "
                            "'-', starting "
                            "with a letter)",
                        "shorten the ModelDeployment or role name");
            continue;
        }
        // The role's Service, then one per replica when a replica has several members.
        // Bounded: a replica count beyond the schema's maximum is the structural check's.
        const std::int64_t replicas = std::min<std::int64_t>(role.role->replicas, max_replicas);
        const std::int64_t candidates = role.role->size > 1 ? replicas + 1 : 1;
        for (std::int64_t candidate = 0; candidate < candidates; ++candidate) {
            std::pmr::string name_of_candidate(service, ctx.memory);
            if (candidate > 0) {
                name_of_candidate.append("-r").append(std::to_string(candidate - 1));
            }
            if (const auto [it, fresh] =
                    services.emplace(std::move(name_of_candidate), Owner{name, nullptr});
                !fresh) {
                sink.report(RuleId::role_names, role.path() + ".name",
                            "Service name " + code(it->first) + " of role " + code(name) +
                                " is also " + describe(it->second),
                            "rename the role");
                break;
            }
        }
        // Members are addressed by hostname only when a replica has more than one.
        if (role.role->size <= 1) {
            continue;
        }
        const std::string hostname =
            std::string(service) + "-r" +
            std::to_string(std::max<std::int64_t>(role.role->replicas, 1) - 1) + "-m" +
            std::to_string(role.role->size - 1);
        if (!is_dns1123_label(hostname)) {
            sink.report(RuleId::role_names, role.path() + ".name",
                        "member hostname " + code(hostname) + " is longer than 63 characters",
                        "shorten the ModelDeployment or role name");
        }
    }
}

void engine_version(const RuleContext& ctx, FindingSink& sink) {
    if (ctx.model.engine_version && !ctx.model.engine_version->empty()) {
        return;
    }
    for (const auto& role : ctx.facts.roles) {
        if (!role.role->image || role.role->image->empty()) {
            sink.report(RuleId::engine_version, "spec.engine.version",
                        "spec.engine.version is required: role " + code(role.role->name) +
                            " names no image, so the operator picks one by engine version",
                        "set spec.engine.version, or an image on every role");
            return;
        }
    }
}

void kv_cache(const RuleContext& ctx, FindingSink& sink) {
    if (ctx.model.kv_cache &&
        (!ctx.model.kv_cache->pool_name || ctx.model.kv_cache->pool_name->empty())) {
        sink.report(RuleId::kv_cache, "spec.kvCache.poolRef.name",
                    "spec.kvCache needs poolRef.name, the KV cache pool to use",
                    "name the pool, or remove spec.kvCache");
    }
}

void resources(const RuleContext& ctx, FindingSink& sink) {
    for (const auto& role : ctx.facts.roles) {
        const Resources& r = role.role->resources;
        if (r.partitioned() && r.sliced()) {
            sink.report(RuleId::resources, role.path() + ".resources",
                        "role " + code(role.role->name) +
                            " asks for a partition profile and a slice percentage; an accelerator "
                            "is either "
                            "partitioned or sliced",
                        "keep acceleratorPartitionedProfile or the slice percentages, not both");
        }
        if (r.accelerator && r.accelerator->negative()) {
            sink.report(RuleId::resources, role.path() + ".resources.accelerator",
                        "role " + code(role.role->name) + " asks for " + r.accelerator->text() +
                            " accelerators; a count is 0 or more",
                        "set resources.accelerator to a count of cards, e.g. \"1\"");
        }
    }
}

void interface(const RuleContext& ctx, FindingSink& sink) {
    for (const auto& role : ctx.facts.roles) {
        const auto& count = role.role->resources.interface_count;
        if (count && (!count->whole() || count->negative())) {
            sink.report(RuleId::interface, role.path() + ".resources.interface",
                        "role " + code(role.role->name) + " requests " + count->text() +
                            " fabric interfaces; the count is a whole number, 0 or more",
                        "set resources.interface to a whole number, e.g. 1");
        }
    }
}

void engine_owned_env(const RuleContext& ctx, FindingSink& sink) {
    for (const auto& role : ctx.facts.roles) {
        for (std::size_t k = 0; k < role.role->env.size(); ++k) {
            const std::string_view name = role.role->env[k].name;
            if (ctx.data.owned_env.owns(ctx.model.engine, name)) {
                sink.report(
                    RuleId::engine_owned_env, role.path() + ".env[" + std::to_string(k) + "]",
                    code(name) + " is set by the operator on every " +
                        std::string(to_string(ctx.model.engine)) + " Pod",
                    "remove it from spec.roles[" + std::to_string(role.role->index) + "].env");
            }
        }
    }
}

// The names a role's last --served-model-name gives: its value, and any positional tokens
// after a separate value (vLLM takes several names).
List<std::string_view> served_names(const ArgStream& args, std::span<const std::string_view> tokens,
                                    Memory memory) {
    List<std::string_view> names(memory);
    const FlagOccurrence* flag = args.last({"--served-model-name"});
    if (flag == nullptr || !flag->value) {
        return names;
    }
    names.push_back(*flag->value);
    for (std::size_t i = flag->value_index + 1;
         flag->value_index != flag->flag_index && i < tokens.size() && !tokens[i].empty() &&
         tokens[i].front() != '-';
         ++i) {
        names.push_back(tokens[i]);
    }
    return names;
}

// The operator leaves a stored role's served name alone while the names, the model and the
// command stay as they were.
bool served_name_held(const RuleContext& ctx, const RoleFacts& role) {
    const RoleFacts* stored = ctx.stored(role.role->name);
    if (stored == nullptr || ctx.old_model->model_name != ctx.model.model_name) {
        return false;
    }
    const auto command_length = [](const Role& r) { return r.command ? r.command->size() : 0; };
    const bool underscores = ctx.data.spelling(ctx.model.engine).underscores;
    const bool old_underscores = ctx.data.spelling(ctx.old_model->engine).underscores;
    return command_length(*stored->role) == command_length(*role.role) &&
           served_names(ArgStream(stored->role->extra_args, old_underscores, ctx.memory),
                        stored->role->extra_args, ctx.memory) ==
               served_names(ArgStream(role.role->extra_args, underscores, ctx.memory),
                            role.role->extra_args, ctx.memory);
}

void served_model_name(const RuleContext& ctx, FindingSink& sink) {
    for (const auto& role : ctx.facts.roles) {
        const FlagOccurrence* flag = role.args.last({"--served-model-name"});
        if (role.role->takes_over() || flag == nullptr || served_name_held(ctx, role)) {
            continue;
        }
        const auto fix = [&] {
            return "pass --served-model-name " + std::string(ctx.model.model_name) +
                   " (spec.model.name), or drop it";
        };
        if (!flag->value) {
            sink.report(RuleId::served_model_name, role.arg_path(flag->flag_index),
                        "--served-model-name on role " + code(role.role->name) + " has no value",
                        fix());
            continue;
        }
        const auto names = served_names(role.args, *role.arg_tokens, ctx.memory);
        if (names.size() > 1) {
            sink.report(RuleId::served_model_name, role.arg_path(flag->value_index + 1),
                        "--served-model-name on role " + code(role.role->name) +
                            " names more than one model; the operator serves exactly one",
                        fix());
            continue;
        }
        if (*flag->value != ctx.model.model_name) {
            sink.report(RuleId::served_model_name, role.arg_path(flag->value_index),
                        "--served-model-name " + code(*flag->value) + " on role " +
                            code(role.role->name) + " differs from spec.model.name " +
                            code(ctx.model.model_name),
                        fix());
        }
    }
}

// How findings about one additional volume name it; the words are only put together when a
// finding needs them.
struct VolumeWords {
    const RoleFacts& role;
    const Volume& volume;
    std::size_t index;  // in additionalVolumes

    std::string path() const {
        return role.path() + ".additionalVolumes[" + std::to_string(index) + "]";
    }
    std::string label() const {
        return volume.name.empty() ? "additional volume " + std::to_string(index)
                                   : "additional volume " + code(volume.name);
    }
};

void volume_sources(const VolumeWords& words, FindingSink& sink) {
    const Volume& volume = words.volume;
    if (volume.sources.empty()) {
        sink.report(RuleId::volumes, words.path(),
                    words.label() + " of role " + code(words.role.role->name) + " names no source",
                    "add one source, e.g. persistentVolumeClaim: {claimName: models} or "
                    "hostPath: {path: /data}");
    } else if (volume.sources.size() > 1) {
        std::vector<std::string> names;
        for (const auto& source : volume.sources) {
            names.push_back(code(source));
        }
        sink.report(RuleId::volumes, words.path(),
                    words.label() + " of role " + code(words.role.role->name) + " names " +
                        std::to_string(names.size()) + " sources (" + join(names, ", ", " and ") +
                        "); a volume has one",
                    "split it into one volume per source");
    }
}

// A subPath is a relative path inside the volume, as Kubernetes requires.
void volume_sub_paths(const VolumeWords& words, FindingSink& sink) {
    const Volume& volume = words.volume;
    for (const auto& [field, value] : {std::pair{"subPath", &volume.sub_path},
                                       std::pair{"subPathExpr", &volume.sub_path_expr}}) {
        if (!*value) {
            continue;
        }
        const std::string_view sub_path = **value;
        if (has_parent_segment(sub_path)) {
            sink.report(RuleId::volumes, words.path() + "." + field,
                        words.label() + " has " + field + " " + code(sub_path) +
                            ", whose '..' segment reaches outside the volume",
                        "name a path inside the volume");
        } else if (!sub_path.empty() && sub_path.front() == '/') {
            sink.report(RuleId::volumes, words.path() + "." + field,
                        words.label() + " has " + field + " " + code(sub_path) +
                            ", an absolute path; it is relative to the volume's root",
                        "drop the leading '/'");
        }
    }
}

void volumes(const RuleContext& ctx, FindingSink& sink) {
    for (const auto& role : ctx.facts.roles) {
        const auto& entries = role.role->additional_volumes;
        const auto words = [&](std::size_t k) { return VolumeWords{role, entries[k], k}; };
        std::pmr::map<std::string_view, std::size_t> mounted(ctx.memory);  // mount -> first entry
        std::pmr::map<std::string_view, std::size_t> named(ctx.memory);    // name -> first entry
        for (std::size_t k = 0; k < entries.size(); ++k) {
            const Volume& volume = entries[k];
            if (!volume.is_object) {
                continue;
            }
            volume_sources(words(k), sink);
            if (!volume.name.empty()) {
                if (const auto [it, fresh] = named.emplace(volume.name, k); !fresh) {
                    sink.report(RuleId::volumes, words(k).path() + ".name",
                                words(k).label() + " has the name of " + words(it->second).path() +
                                    ".name" + "; volume names are unique within a Pod",
                                "rename one of them");
                }
            }
            if (volume.mount_path && !volume.mount_path->empty()) {
                const auto [it, fresh] =
                    mounted.emplace(without_trailing_slash(*volume.mount_path), k);
                if (!fresh) {
                    sink.report(RuleId::volumes, words(k).path() + ".mountPath",
                                words(k).label() + " mounts at " + code(*volume.mount_path) +
                                    ", as does " + words(it->second).path() + ".mountPath",
                                "mount each volume at its own path");
                }
            }
            volume_sub_paths(words(k), sink);
        }
    }
}

constexpr std::array definitions{
    RuleDefinition{RuleId::role_kinds, role_kinds},
    RuleDefinition{RuleId::role_names, role_names},
    RuleDefinition{RuleId::engine_owned_env, engine_owned_env},
    RuleDefinition{RuleId::resources, resources},
    RuleDefinition{RuleId::engine_version, engine_version},
    RuleDefinition{RuleId::kv_cache, kv_cache},
    RuleDefinition{RuleId::served_model_name, served_model_name},
    RuleDefinition{RuleId::volumes, volumes},
    RuleDefinition{RuleId::interface, interface},
};

}  // namespace

std::span<const RuleDefinition> role_rules() {
    return definitions;
}

}  // namespace mdadmit::rules
