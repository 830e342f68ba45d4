"""The fields positions and balances can be sorted by (`sort_by`): "balance" is the service's
documented one; the others are the item fields the service sorts by too."""

POSITION_SORT_FIELDS = ("apy", "decimals", "total_deposited_value", "total_position_value", "yield_earned")
BALANCE_SORT_FIELDS = ("decimals", "total_balance")
SORT_FIELDS = {"positions": ("balance", *POSITION_SORT_FIELDS), "balances": ("balance", *BALANCE_SORT_FIELDS)}
