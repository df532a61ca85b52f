"""How we reach verl, past the contract (:mod:`~verl_focal.integration.compat`) and the registry
(:mod:`~verl_focal.integration.registration`): the post-import hooks (``post_import``, ``arrange``), the hooked
trainers and their modes (``trainer``, ``modes``), the hook around verl's ``compute_advantage`` and the separated
trainers' (``dataproto_hook``), and our TaskRunners (``runner``).  Imported by the plugin: keep this module empty.
"""
